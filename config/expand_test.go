package config

import (
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	env := envMap(map[string]string{"A": "alpha", "B": "", "LONG_NAME_2": "x"})
	for _, tc := range []struct {
		in, out       string
		subst, missed []string
		bad           bool
	}{
		{in: "plain", out: "plain"},
		{in: "$A and $$ and {A}", out: "$A and $$ and {A}"},
		{in: "${A}", out: "alpha", subst: []string{"alpha"}},
		{in: "pre-${A}-${LONG_NAME_2}-post", out: "pre-alpha-x-post", subst: []string{"alpha", "x"}},
		{in: "${env:A}", out: "alpha", subst: []string{"alpha"}},
		{in: "${B}", out: "", subst: []string{""}},
		{in: "${B:-dflt}", out: "dflt", subst: []string{"dflt"}},
		{in: "${A:-dflt}", out: "alpha", subst: []string{"alpha"}},
		{in: "${NOPE:-a:-b}", out: "a:-b", subst: []string{"a:-b"}},
		{in: "${NOPE:-}", out: "", subst: []string{""}},
		{in: "x${NOPE}y${A}", out: "xyalpha", subst: []string{"alpha"}, missed: []string{"NOPE"}},
		{in: "${NOPE}${NOPE2}", out: "", missed: []string{"NOPE", "NOPE2"}},
		{in: "${A", bad: true},
		{in: "${}", bad: true},
		{in: "${9A}", bad: true},
		{in: "${A-B}", bad: true},
		{in: "${input:token}", bad: true},
	} {
		out, subst, missed, err := expand(tc.in, env)
		if (err != nil) != tc.bad {
			t.Errorf("expand(%q) error %v, want error %v", tc.in, err, tc.bad)
			continue
		}
		if tc.bad {
			continue
		}
		if out != tc.out || !reflect.DeepEqual(subst, tc.subst) || !reflect.DeepEqual(missed, tc.missed) {
			t.Errorf("expand(%q) = %q, %q, %q; want %q, %q, %q", tc.in, out, subst, missed, tc.out, tc.subst, tc.missed)
		}
	}
}
