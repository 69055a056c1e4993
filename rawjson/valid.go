package rawjson

// maxDepth is encoding/json's limit on nesting, which Valid keeps so that
// both agree on every input.
const maxDepth = 10000

// Valid reports whether b is one JSON value, surrounded by nothing but
// whitespace, exactly as encoding/json's Valid does (bytes of invalid
// UTF-8 inside strings included, nesting deeper than 10000 not). It
// checks each client line before mcpx reads its envelope, and costs about
// a third of encoding/json's (BenchmarkValid): that scanner calls a
// function per byte.
func Valid(b []byte) bool {
	var small [32]byte
	open := small[:0] // the containers around i: '{' or '['
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if open = append(open, c); len(open) > maxDepth {
				return false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']': empty
				open = open[:len(open)-1]
				i++
			} else if c == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
				continue // to the member's value
			} else {
				continue // to the first element
			}
		case c == '"':
			i = validString(b, i)
		case c == '-' || '0' <= c && c <= '9':
			i = validNumber(b, i)
		default:
			i = literal(b, i)
		}
		if i < 0 {
			return false
		}
		// After a value: a comma and the next one, or the ends of the
		// containers it closes, or the end of the input.
		for {
			i = skipSpace(b, i)
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := open[len(open)-1]
			if b[i] == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if top == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// member checks a member's key and colon at b[i:] and returns the index of
// its value, or -1.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// validString returns the index after the string starting at b[i] (a
// quote), or -1 when it is not a valid JSON string.
func validString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber returns the index after the number starting at b[i], or -1
// when it is not a valid JSON number. What follows it is the caller's to
// check.
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the index after the run of digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// literal returns the index after the true, false or null at b[i], or -1.
func literal(b []byte, i int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			return i + len(lit)
		}
	}
	return -1
}
