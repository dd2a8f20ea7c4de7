package config

import (
	"fmt"
	"strings"
)

// expandEnv replaces ${NAME} and ${NAME:-default} in s with values from
// getenv. "$${" stands for a literal "${". A bare "$" is left alone, so
// templates such as $labels and $value pass through. A variable that is unset
// or empty without a default is an error naming the variable, never its
// value.
func expandEnv(s string, getenv func(string) string) (string, error) {
	return expand(s, getenv, false)
}

// expandEnvKeepGroups is expandEnv for Prometheus scrape configs: ${1},
// ${2}... are relabelling's regex groups and stay as written.
func expandEnvKeepGroups(s string, getenv func(string) string) (string, error) {
	return expand(s, getenv, true)
}

func expand(s string, getenv func(string) string, keepGroups bool) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in value")
		}
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if keepGroups && !hasDef && name != "" && strings.Trim(name, "0123456789") == "" {
			b.WriteString(s[i : i+end+1])
			i += end + 1
			continue
		}
		if !validEnvName(name) {
			return "", fmt.Errorf("invalid environment variable name %q in ${...}", name)
		}
		v := getenv(name)
		if v == "" {
			if !hasDef {
				return "", fmt.Errorf("environment variable %s is not set (use ${%s:-default} for a default)", name, name)
			}
			v = def
		}
		b.WriteString(v)
		i += end + 1
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
