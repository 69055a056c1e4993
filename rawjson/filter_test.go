package rawjson

import "testing"

func TestFilter(t *testing.T) {
	dropState := func(k Key) bool { return k.Is("requestState") }
	for _, tc := range []struct {
		in, want string
		kept     int
	}{
		{`{"name":"a","requestState":"x","arguments":{}}`, `{"name":"a","arguments":{}}`, 2},
		{`{"requestState":"x"}`, `{}`, 0},
		{`{"name":"a"}`, `{"name":"a"}`, 1},
		{`{ "requestState" : "x" , "b" : [1, 2] }`, `{"b":[1, 2]}`, 1},
		{`{"request\u0053tate":"x","c":null}`, `{"c":null}`, 1},
	} {
		got, kept, err := Filter([]byte(tc.in), dropState)
		if err != nil || string(got) != tc.want || kept != tc.kept {
			t.Errorf("Filter(%s) = %s, %d, %v; want %s, %d", tc.in, got, kept, err, tc.want, tc.kept)
		}
	}
	if _, _, err := Filter([]byte(`[1]`), dropState); err == nil {
		t.Error("Filter of an array: no error")
	}
}

func TestAppendFilter(t *testing.T) {
	drop := func(k Key) bool { return k.Is("b") }
	got, kept, err := AppendFilter([]byte(`"x":`), []byte(`{"a":1,"b":2,"c":3}`), drop)
	if err != nil || string(got) != `"x":{"a":1,"c":3}` || kept != 2 {
		t.Errorf("AppendFilter = %s, %d, %v", got, kept, err)
	}
	// On an error what was there stays, and nothing is added.
	got, _, err = AppendFilter([]byte(`"x":`), []byte(`{"a":1,`), drop)
	if err == nil || string(got) != `"x":` {
		t.Errorf("AppendFilter of a cut object = %s, %v; want the prefix and an error", got, err)
	}
}
