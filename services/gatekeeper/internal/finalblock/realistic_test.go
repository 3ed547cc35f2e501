package finalblock

// realisticMessage is a typical final message of a coding agent, about
// 3 KB: headings, bullets, inline code, a fenced command log, a status
// table and the final block.
const realisticMessage = "I've fixed the race in the session cache and added a regression test.\n\n" +
	"## What changed\n\n" +
	"- `internal/cache/session.go`: the eviction loop now takes `mu` before reading `entries`; " +
	"previously `Evict` could run concurrently with `Put` and read a half-written map.\n" +
	"- `internal/cache/session_test.go`: added `TestEvictDuringPut`, which runs 64 goroutines " +
	"putting and evicting and fails under `-race` without the fix.\n" +
	"- `docs/cache.md`: documented that `Evict` is safe to call from any goroutine.\n" +
	"- Bumped `golang.org/x/sync` to v0.12.0 because `errgroup.SetLimit` is needed by the test.\n\n" +
	"## How I checked it\n\n" +
	"I ran the package tests with the race detector, then the whole module:\n\n" +
	"```console\n$ go test -race ./internal/cache/...\nok  \texample.com/svc/internal/cache\t1.284s\n" +
	"$ go test ./...\nok  \texample.com/svc/...\t4.902s\n```\n\n" +
	"| Check | Status |\n|---|---|\n| Unit tests | ✅ 212/212 passed |\n| Race detector | ✅ clean |\n" +
	"| Lint | ✅ passing |\n| Integration tests | ⏳ not run (needs the staging database) |\n\n" +
	"The existing tests still pass, and `go vet ./...` is clean. The benchmark in " +
	"`BenchmarkSessionGet` is unchanged within noise (1.8 µs/op before and after), so I did not " +
	"mention a performance change in the changelog.\n\n" +
	"## What I did not do\n\n" +
	"I could not run the integration suite here because it needs credentials for the staging " +
	"database, which this sandbox does not have. Nothing in the integration path changed, but it is " +
	"not verified. If you want it covered, run `make integration` with `STAGING_DSN` set, or give me " +
	"a read-only DSN and I will run it.\n\n" +
	"The follow-up about sharding the cache (issue #481) is out of scope for this change; I left a " +
	"TODO in `session.go` pointing at the issue rather than starting on it. Once the sharding design " +
	"is agreed, the eviction loop will need to be revisited, since each shard will have its own lock.\n\n" +
	"```claimcheck\n" +
	`{
  "type": "partial",
  "summary": "Fixed the eviction race in the session cache; regression test added and passing under -race.",
  "claims": [
    {"claim_type": "done", "attestation_id": "01KAB0F0000000000000000001"},
    {"claim_type": "partial", "attestation_id": "01KAB0F0000000000000000002"}
  ],
  "what_succeeded": "Unit tests and the race detector pass for internal/cache and the whole module.",
  "what_remains": "The integration suite has not been run; it needs staging credentials.",
  "next_route_or_question": "Could you run make integration with STAGING_DSN set, or provide a read-only DSN?"
}` + "\n```\n"

// realisticJapanese is a final message in Japanese, about 2 KB.
const realisticJapanese = "セッションキャッシュの競合状態を修正し、回帰テストを追加しました。\n\n" +
	"## 変更内容\n\n" +
	"- `internal/cache/session.go`: 退避ループで `entries` を読む前に `mu` を取得するようにしました。" +
	"以前は `Evict` が `Put` と並行して動き、書きかけのマップを読むことがありました。\n" +
	"- `internal/cache/session_test.go`: `TestEvictDuringPut` を追加しました。修正前は `-race` で失敗します。\n" +
	"- `golang.org/x/sync` を v0.12.0 に更新しました。\n\n" +
	"## 確認方法\n\n" +
	"```console\n$ go test -race ./internal/cache/...\nok  \texample.com/svc/internal/cache\t1.284s\n```\n\n" +
	"| チェック | 結果 |\n|---|---|\n| ユニットテスト | ✅ 212/212 |\n| Lint | ✅ |\n| 結合テスト | ⏳ 未実行 |\n\n" +
	"既存のテストはすべて成功しました。`go vet ./...` も問題ありません。\n\n" +
	"## 未対応\n\n" +
	"結合テストはステージングの認証情報が必要なため、ここでは実行できませんでした。検証はされていません。" +
	"読み取り専用の DSN を送っていただけますか？\n\n" +
	"```claimcheck\n" +
	`{
  "type": "partial",
  "summary": "セッションキャッシュの競合状態を修正しました。",
  "claims": [{"claim_type": "partial", "attestation_id": "01KAB0F0000000000000000002"}],
  "what_succeeded": "ユニットテストと race 検出はすべて成功しました。",
  "what_remains": "結合テストは未実行です。",
  "next_route_or_question": "読み取り専用の DSN を送っていただけますか？"
}` + "\n```\n"
