package canon

import "testing"

// Vectors from RFC 8785 (§3.2.2, §3.2.3) and its published test data.
func TestCanonicalizeRFC8785(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "rfc8785 section 3.2.2 example",
			in:   `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "member order by UTF-16 code units",
			in:   `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			want: `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","דּ":"Hebrew Letter Dalet With Dagesh"}`,
		},
		{name: "whitespace and nesting", in: " { \"b\" : [ 1 , { \"d\":true,\"c\":null } ] , \"a\" : \"x\" } ", want: `{"a":"x","b":[1,{"c":null,"d":true}]}`},
		{name: "integers", in: `[0,-0,1,-1,9007199254740991,1e21,1e20]`, want: `[0,0,1,-1,9007199254740991,1e+21,100000000000000000000]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !IsCanonical(got) {
				t.Errorf("canonical output is not a fixed point")
			}
		})
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, "\"\xff\"", `{"a":`, `[1,]`, ``} {
		if _, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%q) succeeded, want error", in)
		}
	}
}
