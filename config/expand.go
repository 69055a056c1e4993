package config

import (
	"errors"
	"strings"
)

// expand replaces ${VAR} and ${VAR:-default} in s. ${env:VAR} (VS Code's
// spelling) is read as ${VAR}. As in the shell, the default is used when
// the variable is unset or empty.
//
// It returns the expanded string, every value it substituted (for
// Config.Secrets), and the names of unset variables that had no default.
// err reports bad syntax only; its text holds variable names, never values.
func expand(s string, lookup func(string) (string, bool)) (out string, substituted, missing []string, err error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i+2:]
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", nil, nil, errors.New("unterminated ${")
		}
		ref := s[:end]
		s = s[end+1:]

		name, def, hasDef := strings.Cut(ref, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !validVarName(name) {
			// The text between the braces is not echoed: it is part of a
			// value that may be a secret.
			if strings.HasPrefix(name, "input:") {
				return "", nil, nil, errors.New("${input:...} is VS Code's and is not supported here (want ${NAME} or ${NAME:-default})")
			}
			return "", nil, nil, errors.New("bad variable reference (want ${NAME} or ${NAME:-default})")
		}
		val, ok := lookup(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok:
			missing = append(missing, name)
			continue
		}
		substituted = append(substituted, val)
		b.WriteString(val)
	}
	return b.String(), substituted, missing, nil
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
