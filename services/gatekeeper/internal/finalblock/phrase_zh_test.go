package finalblock

import "testing"

var _ = register("zh-Hans", []langCase{
	// work
	{"已完成。", []ks{d(ScopeWork, "已完成")}},
	{"登录问题已经修复了。", []ks{d(ScopeWork, "已经修复了")}},
	{"我修复了解析器的问题。", []ks{d(ScopeWork, "修复了")}},
	{"修好了！", []ks{d(ScopeWork, "修好了")}},
	{"我完成了重构。", []ks{d(ScopeWork, "完成了")}},
	{"现在可以正常运行了。", []ks{d(ScopeWork, "现在可以正常运行了")}},
	{"还没完成。", nil},
	{"尚未完成。", nil},
	{"还没有全部完成。", nil},
	{"完成了吗？", nil},
	{"完成了一半。", nil},
	{"如果完成了，请告诉我。", nil},
	{"未完成的任务还有两个。", nil},
	{"如果已经修复了，就可以关闭这个issue。", nil},
	// tests
	{"所有测试都通过了。", []ks{d(ScopeTests, "所有测试都通过了")}},
	{"单元测试全部通过。", []ks{d(ScopeTests, "单元测试全部通过")}},
	{"测试没有通过。", nil},
	{"测试未通过。", nil},
	{"测试是否通过取决于环境。", nil},
	{"请确认测试通过。", nil},
	{"测试通过后再合并。", nil},
	{"测试通过率为80%。", nil},
	{"测试失败的原因是超时。", nil},
	// build
	{"构建成功。", []ks{d(ScopeBuild, "构建成功")}},
	{"编译无错误。", []ks{d(ScopeBuild, "编译无错误")}},
	{"构建没有成功。", nil},
	{"构建成功后再合并。", nil},
	// deploy
	{"已发布到生产环境。", []ks{d(ScopeDeploy, "已发布")}},
	{"已部署到生产环境。", []ks{d(ScopeDeploy, "已部署到生产环境")}},
	{"部署成功。", []ks{d(ScopeDeploy, "部署成功")}},
	{"服务已部署。", []ks{d(ScopeDeploy, "已部署")}},
	{"上线成功了。", []ks{d(ScopeDeploy, "上线成功了")}},
	{"部署到staging。", []ks{d(ScopeDeploy, "部署到staging")}},
	{"部署后请检查日志。", nil},
	{"还没部署。", nil},
	{"发布成功后请检查监控。", nil},
	{"部署完成后请检查日志。", nil},
	// merge
	{"已合并到main。", []ks{d(ScopeMerge, "已合并到main")}},
	{"已推送。", []ks{d(ScopeMerge, "已推送")}},
	{"合入到主分支。", []ks{d(ScopeMerge, "合入到主分支")}},
	{"合并完成了。", []ks{d(ScopeMerge, "合并完成了")}},
	{"已经合并了。", []ks{d(ScopeMerge, "已经合并了")}},
	{"已经推送了。", []ks{d(ScopeMerge, "已经推送了")}},
	{"推送到main。", []ks{d(ScopeMerge, "推送到main")}},
	{"还没合并到main。", nil},
	{"推送到main之前，请先跑一遍测试。", nil},
	// blocked
	{"没有密钥我无法继续。", []ks{b("无法继续")}},
	{"我卡住了。", []ks{b("卡住了")}},
	{"请求被阻止了。", []ks{b("被阻止了")}},
	{"我没有访问权限。", []ks{b("没有访问权限")}},
	{"我无法在这里运行测试；没有任何内容经过验证。", nil},
	{"如果无法继续，我会告诉你。", nil},
	{"如果卡住了，我会先查看日志。", nil},
	// delegation
	{"请提供API密钥。", []ks{q("请提供")}},
	{"麻烦你发给我日志。", []ks{q("麻烦你发给我")}},
	{"能否提供证书？", []ks{q("能否提供")}},
	{"能不能帮我重启服务？", []ks{q("能不能帮我")}},
	{"需要你确认部署。", []ks{q("需要你确认")}},
	{"需要你提供凭据。", []ks{q("需要你提供")}},
	{"我需要你的批准。", []ks{q("我需要你的批准")}},
	{"我需要你的帮助。", []ks{q("我需要你的帮助")}},
	{"我无法访问预发环境的控制台。", []ks{q("无法访问")}},
	{"请查看差异。", nil},
	{"```\n所有测试都通过了。\n```", nil},
	{"不需要你提供任何凭据。", nil},
	{"不需要你确认部署。", nil},
})

var _ = register("zh-Hant", []langCase{
	// work
	{"已完成。", []ks{d(ScopeWork, "已完成")}},
	{"登入問題已經修復了。", []ks{d(ScopeWork, "已經修復了")}},
	{"我修復了解析器的問題。", []ks{d(ScopeWork, "修復了")}},
	{"現在可以正常運作了。", []ks{d(ScopeWork, "現在可以正常運作了")}},
	{"正常工作了。", []ks{d(ScopeWork, "正常工作了")}},
	{"還沒完成。", nil},
	{"完成了嗎？", nil},
	{"如果已經修復了，就可以關閉這個issue。", nil},
	// tests
	{"所有測試都通過了。", []ks{d(ScopeTests, "所有測試都通過了")}},
	{"測試沒有通過。", nil},
	{"請確認測試通過。", nil},
	{"測試通過後再合併。", nil},
	// build
	{"建置成功。", []ks{d(ScopeBuild, "建置成功")}},
	{"編譯沒有錯誤。", []ks{d(ScopeBuild, "編譯沒有錯誤")}},
	{"建置沒有成功。", nil},
	{"建置成功後再合併。", nil},
	// deploy
	{"已發布。", []ks{d(ScopeDeploy, "已發布")}},
	{"已部署到生產環境。", []ks{d(ScopeDeploy, "已部署到生產環境")}},
	{"上線成功。", []ks{d(ScopeDeploy, "上線成功")}},
	{"部署完成了。", []ks{d(ScopeDeploy, "部署完成")}},
	{"還沒部署。", nil},
	{"發布成功後請檢查監控。", nil},
	// merge
	{"已合併到main。", []ks{d(ScopeMerge, "已合併到main")}},
	{"已經合併了。", []ks{d(ScopeMerge, "已經合併了")}},
	{"已經推送了。", []ks{d(ScopeMerge, "已經推送了")}},
	{"合併完成。", []ks{d(ScopeMerge, "合併完成")}},
	{"還沒合併。", nil},
	{"合併到main之前，請先跑一遍測試。", nil},
	// blocked
	{"沒有金鑰我無法繼續。", []ks{b("無法繼續")}},
	{"我沒有存取權限。", []ks{b("沒有存取權限")}},
	{"我無法在這裡執行測試；沒有任何內容經過驗證。", nil},
	{"如果無法繼續，我會告訴你。", nil},
	// delegation
	{"請提供API金鑰。", []ks{q("請提供")}},
	{"麻煩您發送日誌。", []ks{q("麻煩您發送")}},
	{"能否幫我重啟服務？", []ks{q("能否幫我")}},
	{"需要你確認部署。", []ks{q("需要你確認")}},
	{"我需要你的協助。", []ks{q("我需要你的協助")}},
	{"我無法存取預發環境。", []ks{q("無法存取")}},
	{"不需要你確認部署。", nil},
	{"請查看差異。", nil},
})

func TestPhrasesChineseSimplified(t *testing.T)  { runLang(t, "zh-Hans") }
func TestPhrasesChineseTraditional(t *testing.T) { runLang(t, "zh-Hant") }
