package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// checkJSON reads body as one JSON value for a Go value of type t, more
// strictly than encoding/json does, and words every refusal with the path
// of the value it is about (termination.tol_fun, x0[2]):
//
//   - a key given twice in one object is an error (encoding/json keeps the
//     last), anywhere, also in metadata;
//   - a field name must match its json tag exactly (encoding/json matches
//     "Fitness" to fitness); an unknown one is named with the nearest
//     known one;
//   - NaN and Infinity are named as such, with the advice to send null;
//   - a value of the wrong JSON type names its path and the type wanted.
//
// encoding/json then decodes the body; what checkJSON lets through, it
// reads exactly as before.
func checkJSON(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := &walker{dec: dec, body: body}
	if err := w.value(t, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("the body has data after the JSON object")
	}
	return nil
}

// maxDepth bounds the nesting of objects and arrays (encoding/json's own
// limit is 10000).
const maxDepth = 1000

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// walker walks the tokens of one JSON value beside the Go type it is for.
type walker struct {
	dec  *json.Decoder
	body []byte
}

// at names path for a message: "the body" for the top.
func at(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

// value reads one value for type t at path; t nil takes any JSON.
func (w *walker) value(t reflect.Type, path string, depth int) error {
	if depth > maxDepth {
		return invalid("%s: nested deeper than %d levels", at(path), maxDepth)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err, path, depth == 0)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	switch tok := tok.(type) {
	case nil:
		return nil // null reads as "not given" into every field
	case json.Delim:
		switch {
		case tok == '{' && (t == nil || t.Kind() == reflect.Struct):
			return w.object(t, path, depth)
		case tok == '[' && (t == nil || t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			var elem reflect.Type
			if t != nil {
				elem = t.Elem()
			}
			return w.array(elem, path, depth)
		case tok == '{':
			return wrongType(path, "an object", t)
		}
		return wrongType(path, "an array", t)
	case string:
		if t == nil || t.Kind() == reflect.String {
			return nil
		}
		return wrongType(path, "a string", t)
	case bool:
		if t == nil || t.Kind() == reflect.Bool {
			return nil
		}
		return wrongType(path, "a boolean", t)
	case json.Number:
		return checkNumber(tok, t, path)
	}
	return invalid("%s: unexpected %v", at(path), tok)
}

// checkNumber checks that n fits t.
func checkNumber(n json.Number, t reflect.Type, path string) error {
	if t == nil {
		return nil
	}
	var err error
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if _, err = strconv.ParseFloat(string(n), 64); err != nil {
			return invalid("%s: %s is beyond the range of a float64", at(path), n)
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(string(n), 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(string(n), 10, t.Bits())
	default:
		return wrongType(path, "number "+string(n), t)
	}
	if err != nil {
		return wrongType(path, "number "+string(n), t)
	}
	return nil
}

func wrongType(path, got string, t reflect.Type) error {
	return invalid("%s: got %s, want %s", at(path), got, jsonType(t))
}

// object reads the members of an object after its '{': for a struct type
// t, only its fields, by their exact json names.
func (w *walker) object(t reflect.Type, path string, depth int) error {
	var fields map[string]reflect.Type
	if t != nil {
		fields = jsonFields(t)
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err, path, false)
		}
		key, _ := tok.(string)
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		if seen[key] {
			return invalid("%s: the key %q is given twice", sub, key)
		}
		seen[key] = true
		var ft reflect.Type
		if t != nil {
			var ok bool
			if ft, ok = fields[key]; !ok {
				return unknownField(sub, key, fields)
			}
		}
		if err := w.value(ft, sub, depth+1); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // '}'
		return w.syntax(err, path, false)
	}
	return nil
}

// array reads the elements of an array after its '['.
func (w *walker) array(elem reflect.Type, path string, depth int) error {
	for i := 0; w.dec.More(); i++ {
		if err := w.value(elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return w.syntax(err, path, false)
	}
	return nil
}

// unknownField names key, with a field of the same name in another case, or
// else the nearest known one.
func unknownField(path, key string, fields map[string]reflect.Type) error {
	var names []string
	for name := range fields {
		if strings.EqualFold(name, key) {
			return invalid("%s: field names are case-sensitive: got %q, want %q", path, key, name)
		}
		names = append(names, name)
	}
	if near := nearest(key, names); near != "" {
		return invalid("%s: unknown field %q (did you mean %s?)", path, key, near)
	}
	return invalid("%s: unknown field %q", path, key)
}

// nearest returns the name closest to key: among those that share a word
// with it (ftarget, target_fitness) or contain it, the one at the least
// edit distance; else the nearest by edit distance if that is at most
// half their length; "" if none is near.
func nearest(key string, names []string) string {
	k := strings.ToLower(key)
	best, bestD := "", 0
	for _, name := range names {
		d := editDistance(k, name)
		related := len(k) >= 3 && strings.Contains(name, k)
		for _, word := range strings.Split(name, "_") {
			related = related || len(word) >= 3 && strings.Contains(k, word)
		}
		switch {
		case related:
			d -= 1000
		case d > max(len(k), len(name))/2:
			continue
		}
		if best == "" || d < bestD || d == bestD && name < best {
			best, bestD = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// jsonFields maps the json names of struct t's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// syntax words a tokenizer error at path; top says it came at the start of
// the body.
func (w *walker) syntax(err error, path string, top bool) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) && top:
		return invalid("the body is empty, want a JSON object")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("the body is truncated JSON (at %s)", at(path))
	case errors.As(err, &syn):
		// In token mode the error's Offset counts from the last token:
		// the value that failed starts after the decoder's offset.
		i := int(w.dec.InputOffset())
		for i < len(w.body) && strings.IndexByte(" \t\r\n,:", w.body[i]) >= 0 {
			i++
		}
		if lit := nonFinite(w.body, i); lit != "" {
			return invalid("%s: %s is not a JSON number (JSON has no NaN or infinity): send null for a missing or failed value", at(path), lit)
		}
		return invalid("%s: malformed JSON at byte %d: %s", at(path), i, strings.TrimPrefix(syn.Error(), "json: "))
	}
	return invalid("%s: malformed JSON: %s", at(path), strings.TrimPrefix(err.Error(), "json: "))
}

// nonFinite returns the spelling of NaN or infinity that starts at
// body[i], if one does.
func nonFinite(body []byte, i int) string {
	rest := strings.ToLower(string(body[i:min(len(body), i+9)]))
	for _, lit := range []string{"-infinity", "+infinity", "infinity", "-inf", "+inf", "inf", "-nan", "+nan", "nan"} {
		if strings.HasPrefix(rest, lit) {
			return string(body[i : i+len(lit)])
		}
	}
	return ""
}

// jsonBody reports whether r's body may be read as JSON: a Content-Type of
// application/json (with parameters, or any application/...+json); no
// Content-Type only with no body. Any other body is 415: a client that
// does not say it sends JSON may be sending something else (curl's -d
// without -H says application/x-www-form-urlencoded).
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
