module github.com/claimcheck/claimcheck/e2e

go 1.26.0

replace github.com/claimcheck/claimcheck/schemas => ../schemas
replace github.com/claimcheck/claimcheck/pkg => ../pkg
