package finalblock

// japanese is the reviewed Japanese table, matched as substrings within a
// sentence. Japanese negates, asks and makes conditions after the verb
// (成功しませんでした, 成功しましたか, 成功したら), so rows end in a
// positive past or polite form, and what may follow one is checked (after).
var japanese = langSpec{
	tag:    "ja",
	substr: true,
	rules: []rule{
		// work
		done(ScopeWork, "(完了|終了)(しました|しています|済みです|済み)"),
		done(ScopeWork, "(完了|終了)").fin(),
		done(ScopeWork, "(修正|実装|解決|対応|修復|改善|追加)(しました|済みです|済み)"),
		done(ScopeWork, "(直しました|直りました|終わりました|片付きました)"),
		done(ScopeWork, "(正常に|問題なく|ちゃんと|きちんと)(動作|動い|動き)(しています|しました|ています|ました)"),
		done(ScopeWork, "(動く|動作する)ようになりました"),
		// tests
		done(ScopeTests, "テスト(が|は|も|)(すべて|全て|全部|全件|)(成功|合格|パス|通過)(しました|した|しています|です)"),
		done(ScopeTests, "テスト(が|は|も|)(すべて|全て|全部|全件|)(通りました|通った|通っています|グリーンです)"),
		done(ScopeTests, "(すべての|全ての|全)テスト(が|に)(成功|合格|パス|通過)(しました|した)"),
		done(ScopeTests, "テスト(成功|合格|通過|パス)").fin(),
		done(ScopeTests, "ci(が|は|も|)(通りました|通った|成功しました|グリーンです|パスしました)"),
		// build
		done(ScopeBuild, "(ビルド|コンパイル)(が|は|も|に|)(成功|通過|パス)(しました|した|しています|です)"),
		done(ScopeBuild, "(ビルド|コンパイル)(が|は|も|)(通りました|通った|通っています)"),
		done(ScopeBuild, "ビルド(成功|完了)").fin(),
		// deploy
		done(ScopeDeploy, "(本番|本番環境|ステージング|ステージング環境|prod|production|staging)(に|へ)(デプロイ|リリース|反映)"+
			"(しました|済み|済みです|完了|されました|した)"),
		done(ScopeDeploy, "(デプロイ|リリース)(しました|完了しました|済みです|済み|されました)"),
		done(ScopeDeploy, "(デプロイ|リリース)完了").fin(),
		// merge
		done(ScopeMerge, "(main|master|メイン|mainブランチ|masterブランチ)(に|へ)(マージ|プッシュ|push|merge)"+
			"(しました|済み|済みです|完了|されました|した)"),
		done(ScopeMerge, "(マージ|プッシュ)(しました|完了しました|済みです|済み|されました)"),
		done(ScopeMerge, "マージ完了").fin(),
		// blocked
		blocked("(先に進めません|先に進むことができません|作業を進められません|進められません|続行できません|作業を続けられません|" +
			"作業を継続できません)"),
		blocked("(ブロックされています|行き詰まっています|行き詰まりました)"),
		blocked("(アクセス権|権限|認証情報)(が|を)(ありません|持っていません)"),
		// delegation
		request("(送って|送信して|共有して|提供して|実行して|追加して|設定して|再起動して|インストールして|付与して|貼り付けて|" +
			"アップロードして|作成して|発行して|有効にして)(ください|下さい|いただけますか|いただけませんか|もらえますか|くれますか|" +
			"いただけないでしょうか|ほしいです|欲しいです)"),
		request("(アクセスできません|ダウンロードできません|取得できません|開けません)"),
		request("(ご|あなたの)(承認|協力|許可)(が必要です|をお願いします|をお願いいたします)"),
	},
	hypotheticals: "もし 万一 仮に",
	negBefore:     "未 非 不",
	after:         "ら か$ かどうか かも 後 次第 予定 前 待ち でしょうか なら ことを確認して か確認 とき 時 場合 い ように べき",
	joiners:       "です でした が けど ので から ね よ",
}
