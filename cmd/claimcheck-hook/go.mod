module github.com/claimcheck/claimcheck/cmd/claimcheck-hook

go 1.26.0

replace github.com/claimcheck/claimcheck/schemas => ../../schemas

replace github.com/claimcheck/claimcheck/pkg => ../../pkg

require (
	github.com/claimcheck/claimcheck/pkg v0.0.0-00010101000000-000000000000
	github.com/claimcheck/claimcheck/schemas v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
)
