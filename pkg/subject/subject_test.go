package subject

import (
	"regexp"
	"testing"
)

// claimReplyTo is claim.v1.schema.json's reply_to pattern.
var claimReplyTo = regexp.MustCompile(`^_INBOX\.([a-z]+\.[a-z0-9][a-z0-9_-]{0,62}\.)?[A-Za-z0-9_-]{1,128}$`)

func TestValidReplyAgreesWithTheClaimSchema(t *testing.T) {
	for _, s := range []string{
		"_INBOX.abc", "_INBOX.hook.laptop.Abc123", "_INBOX.hook.dev1_example_com.x", "_INBOX.hook.-x.y", "_INBOX.Hook.x.y",
		"_INBOX.hook.x", "_INBOX.a.b.c.d", "_INBOX.", "_INBOX..x", "cc.reply.x", "_INBOX.x*", "_INBOX.hook.x.>", "_INBOX.hook.x.a b",
		"_INBOX.hook.X.y", "_INBOX.hook.x_.y", "_INBOX.9.x.y",
	} {
		if got, want := ValidReply(s), claimReplyTo.MatchString(s); got != want {
			t.Errorf("ValidReply(%q) = %v, the schema's pattern says %v", s, got, want)
		}
	}
}

func FuzzValidReply(f *testing.F) {
	for _, s := range []string{"_INBOX.abc", "_INBOX.hook.laptop.Abc123", "_INBOX.a.b.c.d", "_INBOX.hook.-x.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidReply(s), claimReplyTo.MatchString(s); got != want {
			t.Errorf("ValidReply(%q) = %v, the schema's pattern says %v", s, got, want)
		}
	})
}

func TestParseIntake(t *testing.T) {
	st, ok := ParseIntake("cc.intake.3.hook.laptop.sess-1.PostToolUse")
	if !ok || st.Origin != "hook" || st.Name != "laptop" || st.Chain != "sess-1" || st.Event != "PostToolUse" || st.Legacy {
		t.Errorf("new form: %+v %v", st, ok)
	}
	st, ok = ParseIntake("cc.intake.3.sess-1.Stop")
	if !ok || !st.Legacy || st.Chain != "sess-1" || st.Event != "Stop" {
		t.Errorf("legacy form: %+v %v", st, ok)
	}
	for _, bad := range []string{"cc.intake.3.a.b.c", "cc.intake.3..b", "cc.ledger.x", "cc.intake.1.a.b.c.d.e.f", "cc.intake."} {
		if st, ok := ParseIntake(bad); ok {
			t.Errorf("ParseIntake(%q) = %+v", bad, st)
		}
	}
	if h, k, ok := ParseGate(Gate("laptop", GateStop)); !ok || h != "laptop" || k != GateStop {
		t.Errorf("ParseGate: %q %q %v", h, k, ok)
	}
	for _, bad := range []string{"cc.gate.stop", "cc.gate..stop", "cc.gate.a.b.c", "cc.other.a.b"} {
		if h, k, ok := ParseGate(bad); ok {
			t.Errorf("ParseGate(%q) = %q %q", bad, h, k)
		}
	}
}
