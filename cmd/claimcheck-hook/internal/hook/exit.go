package hook

// The hook's exit codes, each with one meaning. Claude Code treats 2 as
// blocking (a Stop is refused, a PreToolUse denied) and any other non-zero
// code as a non-blocking error it shows to the user.
const (
	// ExitOK: the event was recorded (delivered or spooled), or a gated
	// event got its answer on stdout.
	ExitOK = 0
	// ExitRejected: the input or the configuration was refused; a rejected
	// event was recorded where a session was known.
	ExitRejected = 1
	// ExitBlock: Claude Code's blocking code, used when stdout cannot carry
	// the answer (the reason goes to stderr).
	ExitBlock = 2
	// ExitFailed: the event could be neither delivered nor spooled, NATS
	// refused the credentials, or the hook failed internally.
	ExitFailed = 3
)
