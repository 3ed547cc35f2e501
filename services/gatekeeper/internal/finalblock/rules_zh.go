package finalblock

// The Chinese tables, matched as substrings within a sentence: chineseBoth
// ("zh") holds the rows that read the same in Simplified and Traditional
// characters, chineseSimplified ("zh-Hans") and chineseTraditional
// ("zh-Hant") the others. Chinese negates before the verb (没有通过,
// 未完成), so negators are looked for before the phrase in its clause.
const (
	zhNegators      = "没 沒 未 不 无法 無法 尚未 还没 還沒 并未 並未 别 別 非"
	zhHypotheticals = "如果 若 假如 要是 一旦 等到 直到 确保 確保 请确认 請確認 请检查 請檢查 请验证 請驗證 需要 是否 能否 以便 将 將 希望"
	zhAfter         = "吗 嗎 么 麼 后 後 之后 之後 以后 以後 时 時 的话 的話 再 前 之前 率 与否 與否 没有 沒有 没 沒 一半 部分 中 不了"
	zhNegBefore     = "未 没 沒 不 无 無"
	zhJoiners       = "了 的 啦"
)

var chineseBoth = langSpec{
	tag:    "zh",
	substr: true,
	rules: []rule{
		done(ScopeWork, "(已|都已|均已|全部|已全部)(完成|搞定)"),
		done(ScopeWork, "(完成|搞定)了"),
		done(ScopeWork, "(修好|改好)了"),
		done(ScopeWork, "正常工作了"),
		done(ScopeDeploy, "(已|成功)部署"),
		done(ScopeDeploy, "部署(完成|成功)"),
		done(ScopeDeploy, "(已|成功|)部署到(staging|production|prod)"),
		done(ScopeMerge, "(已|成功|)推送到(main|master|主分支)"),
		done(ScopeMerge, "已(合入|推送)(了|)"),
		done(ScopeMerge, "合入(到|至)(main|master|主分支)"),
		blocked("卡住了"),
		blocked("(被阻塞|被阻止)(了|)"),
		request("(能否|能不能|可否)(你|您|)(提供|分享|授予|配置|添加)"),
		request("需要(你|您)(提供|配置|授予|添加)"),
		request("(我|我们|我們)需要(你|您)的批准"),
	},
	negators: zhNegators, hypotheticals: zhHypotheticals, after: zhAfter, negBefore: zhNegBefore, joiners: zhJoiners,
}

var chineseSimplified = langSpec{
	tag:    "zh-Hans",
	substr: true,
	rules: []rule{
		// work
		done(ScopeWork, "(已经|已)(修复|解决|实现|处理)(了|)"),
		done(ScopeWork, "(修复|解决|实现|处理好)了"),
		done(ScopeWork, "(现在|已经|)(可以|能|)正常运行(了)"),
		// tests
		done(ScopeTests, "(所有|全部|全部的|)(单元|集成|)测试(用例|)(都|均|已|已经|全部|都已|均已|也|)(通过|跑通|全绿|成功)(了|)"),
		// build
		done(ScopeBuild, "(构建|编译)(已|已经|)(成功|通过)(了|)"),
		done(ScopeBuild, "编译(无|没有)(错误|报错)"),
		// deploy
		done(ScopeDeploy, "(已经|已|成功)(发布|上线)(了|)"),
		done(ScopeDeploy, "(已经|已|成功|)部署到(生产环境|生产|线上|正式环境|预发环境|预发)"),
		done(ScopeDeploy, "(发布|上线)(成功|完成)(了|)"),
		// merge
		done(ScopeMerge, "(已经|已|)合并(到|进|至)(main|master|主分支|主干)(了|)"),
		done(ScopeMerge, "(已经|已)合并(了|)"),
		done(ScopeMerge, "已经(合入|推送)(了|)"),
		done(ScopeMerge, "合并(完成|成功)(了|)"),
		// blocked
		blocked("(无法|不能|没法|没办法)(继续|继续进行|推进|进行下去)"),
		blocked("没有(访问|)权限"),
		// delegation
		request("请(你|您|)(提供|发送|发给我|给我|帮我|运行|执行|添加|配置|授予|上传|分享|重启|安装|创建|生成|开通)"),
		request("(麻烦)(你|您|)(提供|发送|发给我|给我|帮我|运行|执行|添加|配置|授予|上传|分享|重启|安装|开通)"),
		request("(能否|能不能|可否)(你|您|)(发送|发给我|给我|帮我|运行|执行|上传|重启|安装|开通)"),
		request("需要(你|您)(发送|运行|执行|帮忙|协助|确认)"),
		request("(我|我们)需要(你|您)的(帮助|协助|凭据|密码|令牌|密钥|权限|确认)"),
		// Not users' or the outside's access: "未登录用户无法访问管理页面" describes the code.
		request("(无法|不能)(访问|下载|获取|打开)").na("用户 客户端 外部"),
	},
	negators: zhNegators, hypotheticals: zhHypotheticals, after: zhAfter, negBefore: zhNegBefore, joiners: zhJoiners,
}

var chineseTraditional = langSpec{
	tag:    "zh-Hant",
	substr: true,
	rules: []rule{
		// work
		done(ScopeWork, "(已經|已)(修復|解決|實現|處理)(了|)"),
		done(ScopeWork, "(修復|解決|實現|處理好)了"),
		done(ScopeWork, "(現在|已經|)(可以|能|)正常(運行|運作)(了)"),
		// tests
		done(ScopeTests, "(所有|全部|全部的|)(單元|整合|)測試(用例|案例|)(都|均|已|已經|全部|都已|均已|也|)(通過|跑通|全綠|成功)(了|)"),
		// build
		done(ScopeBuild, "(構建|建置|編譯)(已|已經|)(成功|通過)(了|)"),
		done(ScopeBuild, "編譯(無|沒有)(錯誤|報錯)"),
		// deploy
		done(ScopeDeploy, "(已經|已|成功)(發布|發佈|上線)(了|)"),
		done(ScopeDeploy, "(已經|已|成功|)部署到(生產環境|生產|線上|正式環境|預發環境)"),
		done(ScopeDeploy, "(發布|發佈|上線)(成功|完成)(了|)"),
		// merge
		done(ScopeMerge, "(已經|已|)合併(到|進|至)(main|master|主分支|主幹)(了|)"),
		done(ScopeMerge, "(已經|已)合併(了|)"),
		done(ScopeMerge, "已經(合入|推送)(了|)"),
		done(ScopeMerge, "合併(完成|成功)(了|)"),
		// blocked
		blocked("(無法|不能|沒法|沒辦法)(繼續|繼續進行|推進|進行下去)"),
		blocked("沒有(存取|訪問|)權限"),
		// delegation
		request("請(你|您|)(提供|發送|發給我|給我|幫我|運行|執行|新增|添加|設定|配置|授予|上傳|分享|重啟|安裝|建立)"),
		request("(麻煩)(你|您|)(提供|發送|發給我|給我|幫我|運行|執行|新增|設定|授予|上傳|分享|重啟|安裝|開通)"),
		request("(能否|能不能|可否)(你|您|)(發送|發給我|給我|幫我|運行|執行|上傳|重啟|安裝|開通|新增|設定)"),
		request("需要(你|您)(發送|運行|執行|幫忙|協助|確認)"),
		request("(我|我們)需要(你|您)的(幫助|協助|憑證|密碼|權杖|金鑰|權限|確認)"),
		// Not users' or the outside's access: "未登入的用戶無法存取管理頁面" describes the code.
		request("(無法|不能)(存取|訪問|下載|取得|獲取|開啟|打開)").na("用戶 客戶端 外部"),
	},
	negators: zhNegators, hypotheticals: zhHypotheticals, after: zhAfter, negBefore: zhNegBefore, joiners: zhJoiners,
}
