package session

// EditMeta decodes a stored session record, lets edit change it and encodes
// it again: for the external tests that plant faults in a record.
func EditMeta(b []byte, edit func(m *Meta)) ([]byte, error) {
	m, err := decodeMeta(b)
	if err != nil {
		return nil, err
	}
	edit(m)
	return encodeMeta(m)
}

// Meta and PartialTell are the record's types, named for EditMeta's callers.
type (
	Meta        = meta
	PartialTell = partialTell
)

// CacheUse returns how many sessions m's cache holds decoded and their
// bytes, as it counts them.
func CacheUse(m *Manager) (sessions int, bytes int64) {
	m.cache.mu.Lock()
	defer m.cache.mu.Unlock()
	for _, e := range m.cache.entries {
		if e.size > 0 {
			sessions++
		}
	}
	return sessions, m.cache.bytes
}
