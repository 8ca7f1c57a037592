package session

// EventKind names a change in a session's life.
type EventKind string

// The events of Options.OnEvent.
const (
	EventCreated   EventKind = "created"
	EventTold      EventKind = "told"      // a generation told whole and applied
	EventRestarted EventKind = "restarted" // an IPOP restart, by the tell that ended the run
	EventStopped   EventKind = "stopped"   // by a criterion, or a stop request (Session.StopReasons says which)
	EventDeleted   EventKind = "deleted"
)

// Event is a change in a session's life, reported to Options.OnEvent once
// it is stored: for logs and metrics. The callback runs while the session
// is held, so it must be quick and must not call the Manager.
type Event struct {
	Kind    EventKind
	Session Session // after the change; of EventDeleted, only the ID
	// Evaluations are those of the generation told (EventTold).
	Evaluations int
}

// emit reports an event, if anyone listens.
func (m *Manager) emit(kind EventKind, s Session, evaluations int) {
	if m.onEvent != nil {
		m.onEvent(Event{Kind: kind, Session: s, Evaluations: evaluations})
	}
}

// written reports the events of w, just written to session id (l as
// written).
func (m *Manager) written(id string, l *loaded, w *write) {
	if m.onEvent == nil {
		return
	}
	switch {
	case w.del:
		m.emit(EventDeleted, Session{ID: id}, 0)
	case w.stop:
		m.emit(EventStopped, view(l), 0)
	case w.told != nil:
		s := view(l)
		m.emit(EventTold, s, w.told.Lambda)
		if w.told.Restarted {
			m.emit(EventRestarted, s, 0)
		}
		if s.Status == StatusStopped {
			m.emit(EventStopped, s, 0)
		}
	}
}
