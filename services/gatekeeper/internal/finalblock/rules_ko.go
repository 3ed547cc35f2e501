package finalblock

// korean is the reviewed Korean table, matched as substrings within a
// sentence with spaces ignored (테스트 통과, 테스트통과). Korean negates,
// asks and makes conditions in the verb ending (통과하지 않았습니다,
// 통과했습니까, 통과하면), so rows end in a positive ending and what may
// follow a bare noun (완료, 통과) is checked.
var korean = langSpec{
	tag:    "ko",
	substr: true,
	rules: []rule{
		// work
		done(ScopeWork, "완료(했습니다|했어요|되었습니다|됐습니다|됨|했다|되었어요|됐어요|하였습니다)"),
		done(ScopeWork, "완료").fin(),
		done(ScopeWork, "(수정|구현|해결|처리)(했습니다|했어요|되었습니다|됐습니다|하였습니다)"),
		done(ScopeWork, "(고쳤습니다|고쳤어요|마쳤습니다|끝났습니다|끝냈습니다)"),
		done(ScopeWork, "(이제|정상적으로|잘|문제없이) (작동|동작)(합니다|해요|하고 있습니다|했습니다)"),
		// tests
		done(ScopeTests, "테스트(가|는|도|를|)(모두|전부|다|)(통과했습니다|통과했어요|통과했다|통과됨|통과하였습니다|통과되었습니다|"+
			"성공했습니다|성공했어요)"),
		done(ScopeTests, "테스트 통과").fin(),
		// build
		done(ScopeBuild, "(빌드|컴파일)(가|는|이|도|)(성공했습니다|성공했어요|성공하였습니다|통과했습니다|됩니다|완료되었습니다|완료했습니다)"),
		done(ScopeBuild, "(빌드|컴파일) (성공|완료)").fin(),
		// deploy
		done(ScopeDeploy, "(프로덕션|운영 환경|운영|스테이징|prod|production|staging)(에|으로|에도|)배포"+
			"(했습니다|했어요|되었습니다|됐습니다|됨|하였습니다|완료)"),
		done(ScopeDeploy, "배포(했습니다|했어요|되었습니다|됐습니다|하였습니다|완료했습니다)"),
		done(ScopeDeploy, "배포 완료").fin(),
		// merge
		done(ScopeMerge, "(main|master|메인 브랜치|메인)(에|으로|로|)(병합|머지|푸시)(했습니다|했어요|되었습니다|됐습니다|됨|하였습니다|완료)"),
		done(ScopeMerge, "(병합|머지|푸시)(했습니다|했어요|되었습니다|됐습니다|하였습니다)"),
		done(ScopeMerge, "(병합|머지) 완료").fin(),
		// blocked
		blocked("(진행할 수 없습니다|진행할 수 없어요|계속할 수 없습니다|계속 진행할 수 없습니다|진행이 불가능합니다)"),
		blocked("(막혀 있습니다|막혔습니다|막힌 상태입니다)"),
		blocked("(접근 권한|권한|자격 증명)(이|가) 없습니다"),
		// delegation
		request("(보내|전달해|공유해|제공해|실행해|추가해|설정해|업로드해|부여해|재시작해|설치해|생성해|넣어|만들어)" +
			"(주세요|주시겠어요|주실 수 있나요|주시겠습니까|줄 수 있나요|주시기 바랍니다|주실래요)"),
		request("(접근할 수 없습니다|다운로드할 수 없습니다|가져올 수 없습니다|열 수 없습니다)"),
		request("(승인|도움|협조|허가)(이|가) 필요합니다"),
	},
	hypotheticals: "만약 만일 혹시",
	negBefore:     "미",
	after:         "면 후 뒤 여부 예정 시 까 나요 는지 인지",
	joiners:       "입니다 했습니다 되었습니다 됐습니다",
}
