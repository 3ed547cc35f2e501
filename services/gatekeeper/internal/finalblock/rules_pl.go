package finalblock

// polish is the reviewed Polish table.
var polish = langSpec{
	tag: "pl",
	rules: []rule{
		// work
		done(ScopeWork, "(jest|są|wszystko jest|zostało|zostały|został|została) (już |teraz |w pełni |)(gotowe|gotowy|gotowa|zrobione|"+
			"skończone|ukończone|zakończone|naprawione|naprawiony|naprawiona|poprawione|rozwiązane|rozwiązany|zaimplementowane|"+
			"zaimplementowany)").nb("przez jako w za"),
		done(ScopeWork, "(gotowe|zrobione|skończone)").pred(),
		done(ScopeWork, "(naprawiłem|naprawiłam|naprawiliśmy|poprawiłem|poprawiłam|zaimplementowałem|zaimplementowałam|skończyłem|"+
			"skończyłam|ukończyłem|ukończyłam|rozwiązałem|rozwiązałam)"),
		done(ScopeWork, "działa (teraz|poprawnie|prawidłowo|jak należy|znowu|ponownie)"),
		done(ScopeWork, "(teraz|już|wszystko) działa").fin(),
		// tests
		done(ScopeTests, "(wszystkie |)testy (już |teraz |)(przechodzą|przeszły|są zielone|zakończyły się sukcesem)"),
		// build
		done(ScopeBuild, "(build|kompilacja|budowanie) (już |teraz |)(przechodzi|przeszedł|przeszła|działa|jest zielony|"+
			"zakończył się sukcesem|zakończyła się sukcesem)"),
		done(ScopeBuild, "(kod|projekt|to|wszystko) się (kompiluje|buduje)").fin(),
		done(ScopeBuild, "(kompiluje|buduje) się (bez błędów|poprawnie)"),
		// deploy
		done(ScopeDeploy, "(wdrożyłem|wdrożyłam|wdrożyliśmy|wdrożone|wdrożono|opublikowałem|opublikowałam|zdeployowałem|zdeployowałam|"+
			"zdeployowane) (na|do) (produkcję|produkcji|prod|staging|stagingu)"),
		done(ScopeDeploy, "(wdrożyłem|wdrożyłam|wdrożyliśmy|zdeployowałem|zdeployowałam)"),
		done(ScopeDeploy, "(jest|są) (już |teraz |)(na produkcji|wdrożone|wdrożony)").fin(),
		// merge
		done(ScopeMerge, "(zmergowałem|zmergowałam|zmergowane|scaliłem|scaliłam|scalone|wypchnąłem|wypchnęłam|wypchnięte|wrzuciłem|"+
			"wrzuciłam) (do|na) (main|master|maina|mastera)"),
		done(ScopeMerge, "(pr|pull request|branch) (został|jest) (zmergowany|scalony)"),
		// blocked
		blocked("nie (mogę|możemy|mogłem|mogłam) (kontynuować|iść dalej|pójść dalej)"),
		blocked("(jestem|jesteśmy) (zablokowany|zablokowana|zablokowani)"),
		blocked("(utknąłem|utknęłam|utknęliśmy)"),
		blocked("nie (mam|mamy) (dostępu|uprawnień|danych dostępowych|poświadczeń)"),
		// delegation
		request("proszę (o przesłanie|o podanie|o dodanie|o uruchomienie|o udostępnienie|przesłać|wysłać|podać|uruchomić|dodać|" +
			"udostępnić|nadać|zainstalować|skonfigurować|zrestartować)"),
		// Not "czy możesz mi dać znać" (could you let me know).
		request("(czy możesz|czy mógłbyś|czy mogłabyś|czy może pan|czy może pani|czy mogą państwo) (mi |nam |)(przesłać|wysłać|podać|" +
			"uruchomić|dodać|udostępnić|nadać|zainstalować|skonfigurować|zrestartować|dać)").nb("znać"),
		// Not "daj mi znać" (let me know).
		request("(prześlij|wyślij|podaj|daj) (mi|nam)").nb("znać"),
		request("potrzebuję (twojej|pana|pani) (pomocy|zgody|akceptacji|decyzji|potwierdzenia)"),
		request("(musisz|będziesz musiał|będziesz musiała)"),
	},
	negators:          "nie nigdy bez żaden żadna żadne ani prawie częściowo nic",
	hypotheticals:     "jeśli jeżeli gdy kiedy gdyby zanim dopóki będzie będą powinno powinny musi muszą należy trzeba czy upewnij sprawdź",
	hypotheticalPairs: "mam nadzieję|po tym",
	imperatives:       "sprawdź uruchom przetestuj",
	leadIns:           "potem teraz najpierw",
	conjunctions:      "i oraz ale więc bo ponieważ chociaż jednak natomiast",
	linking:           "jest są był była było były już teraz wszystko zostało zostały został została",
	complementizers:   "że",
}
