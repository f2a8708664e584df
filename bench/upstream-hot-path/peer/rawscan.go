// A byte scanner that finds values by key path in JSON text and returns them as verbatim
// sub-slices, written to behave like the raw extraction upstream does with buger/jsonparser
// (Get and ObjectEach): nothing is decoded, every search starts again at the beginning of
// the document and walks it byte by byte until the path is found (or to the end when it is
// absent), and string values come back as the bytes between their quotes, not unescaped.
// Only the standard library is available here, and encoding/json has no such primitive.
package peer

import (
	"bytes"
	"encoding/json"
)

type rawKind int

const (
	rawInvalid rawKind = iota
	rawString
	rawNumber
	rawObject
	rawArray
	rawBool
	rawNull
)

func skipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string whose opening
// quote is at d[i-1], or -1.
func stringEnd(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}

// valueEnd returns where the value starting at d[i] ends, and its kind.
func valueEnd(d []byte, i int) (int, rawKind) {
	if i >= len(d) {
		return -1, rawInvalid
	}
	switch c := d[i]; {
	case c == '"':
		return stringEnd(d, i+1), rawString
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				j = stringEnd(d, j+1)
				if j < 0 {
					return -1, rawInvalid
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					if c == '{' {
						return j + 1, rawObject
					}
					return j + 1, rawArray
				}
			}
		}
		return -1, rawInvalid
	default:
		j := i
		for j < len(d) {
			switch d[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			}
			j++
		}
	done:
		switch c {
		case 't', 'f':
			return j, rawBool
		case 'n':
			return j, rawNull
		default:
			return j, rawNumber
		}
	}
}

// unescapeKey turns a raw key (between its quotes) into its decoded text, allocating only
// when it holds an escape, as jsonparser does.
func unescapeKey(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return raw
	}
	return []byte(s)
}

// members calls fn for every member of the object starting at d[i] (after whitespace);
// fn returns false to stop. It returns false if the text is not an object.
func members(d []byte, i int, fn func(key []byte, vstart, vend int, k rawKind) bool) bool {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != '{' {
		return false
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return true
	}
	for i < len(d) {
		if d[i] != '"' {
			return false
		}
		kend := stringEnd(d, i+1)
		if kend < 0 {
			return false
		}
		key := d[i+1 : kend-1]
		i = skipSpace(d, kend)
		if i >= len(d) || d[i] != ':' {
			return false
		}
		i = skipSpace(d, i+1)
		vend, k := valueEnd(d, i)
		if vend < 0 {
			return false
		}
		if !fn(key, i, vend, k) {
			return true
		}
		i = skipSpace(d, vend)
		if i < len(d) && d[i] == ',' {
			i = skipSpace(d, i+1)
			continue
		}
		return i < len(d) && d[i] == '}'
	}
	return false
}

// rawGet finds the value at path (object keys from the top level down) and returns it
// verbatim: objects and arrays with their brackets, strings without their quotes and not
// unescaped, null as an empty slice.
func rawGet(d []byte, path ...string) ([]byte, rawKind, bool) {
	start, end, k := 0, len(d), rawObject
	for _, want := range path {
		if k != rawObject {
			return nil, rawInvalid, false
		}
		found := false
		members(d[:end], start, func(key []byte, vs, ve int, vk rawKind) bool {
			if string(unescapeKey(key)) == want {
				start, end, k, found = vs, ve, vk, true
				return false
			}
			return true
		})
		if !found {
			return nil, rawInvalid, false
		}
	}
	switch k {
	case rawString:
		return d[start+1 : end-1], k, true
	case rawNull:
		return d[start:start], k, true
	default:
		return d[start:end], k, true
	}
}

// rawEach calls fn with every member of the object at path: the key decoded, the value
// verbatim as rawGet returns it.
func rawEach(d []byte, fn func(key, value []byte, k rawKind), path ...string) bool {
	obj, k, ok := rawGet(d, path...)
	if !ok || k != rawObject {
		return false
	}
	return members(obj, 0, func(key []byte, vs, ve int, vk rawKind) bool {
		v := obj[vs:ve]
		if vk == rawString {
			v = obj[vs+1 : ve-1]
		} else if vk == rawNull {
			v = obj[vs:vs]
		}
		fn(unescapeKey(key), v, vk)
		return true
	})
}
