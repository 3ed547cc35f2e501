package finalblock

// german is the reviewed German table.
//
//nolint:misspell // the words are another language's
var german = langSpec{
	tag: "de",
	rules: []rule{
		// work
		done(ScopeWork, "(fertig|erledigt|abgeschlossen|behoben|gefixt|repariert)").pred(),
		done(ScopeWork, "(implementiert|umgesetzt)").pred().ul("als über durch mittels per"),
		done(ScopeWork, "funktioniert (jetzt|wieder|einwandfrei|korrekt|wie erwartet)"),
		done(ScopeWork, "(es|das|alles) funktioniert (jetzt |wieder |)").fin().na("wie so"),
		// tests
		done(ScopeTests, "(alle |die |sämtliche |)(tests|unit-tests|testfälle) (sind |waren |)(jetzt |nun |wieder |alle |)"+
			"(grün|bestanden|erfolgreich|durchgelaufen)"),
		done(ScopeTests, "(alle |die |)tests (laufen|liefen|gehen|gingen) (jetzt |nun |wieder |alle |)(durch|grün|erfolgreich)"),
		done(ScopeTests, "(alle |die |)tests bestehen").nb("aus"),
		// build
		done(ScopeBuild, "(der |)(build|build-vorgang) (ist |war |läuft |lief |)(jetzt |wieder |)(grün|erfolgreich|durch)"),
		done(ScopeBuild, "kompiliert (jetzt |wieder |)(fehlerfrei|sauber|erfolgreich|ohne fehler|ohne warnungen)"),
		done(ScopeBuild, "(es|das projekt|der code) (kompiliert|baut) (jetzt |wieder |)").fin(),
		// deploy
		done(ScopeDeploy, "(auf|in|nach) (produktion|prod|staging|die produktion|production) "+
			"(deployt|deployed|ausgerollt|ausgeliefert|bereitgestellt|veröffentlicht)"),
		done(ScopeDeploy, "(deployt|deployed|ausgerollt|bereitgestellt) (auf|in|nach) (produktion|prod|staging|die produktion)"),
		done(ScopeDeploy, "(ist|wurde|sind|wurden) (jetzt |nun |erfolgreich |)(deployt|deployed|ausgerollt|live|veröffentlicht)").fin(),
		// merge
		done(ScopeMerge, "(in|nach|auf) (main|master|den main-branch|den master-branch|den main) "+
			"(gemergt|gemerged|gepusht|zusammengeführt|integriert)"),
		done(ScopeMerge, "(gemergt|gemerged|gepusht|zusammengeführt) (in|nach|auf) (main|master)"),
		done(ScopeMerge, "(der pr|der pull request|die änderung|der branch) (ist|wurde) (jetzt |nun |)(gemergt|gemerged|zusammengeführt)"),
		// blocked
		blocked("(ich|wir) (komme|kommen) (hier |)nicht weiter"),
		blocked("(ich|wir) (kann|können|konnte|konnten) nicht (fortfahren|weitermachen|weiterarbeiten)"),
		blocked("(ich bin|wir sind) (gerade |derzeit |momentan |immer noch |noch |)blockiert"),
		blocked("(ich stecke|wir stecken) (gerade |immer noch |)fest"),
		blocked("(ich|wir) (habe|haben|hatte|hatten) " +
			"(keinen zugriff|keine berechtigung|keine berechtigungen|keine zugangsdaten|keine rechte)"),
		blocked("(mir|uns) fehlen (die |)(berechtigungen|zugangsdaten|rechte)"),
		// delegation
		request("bitte (schick|schicke|schicken sie|sende|senden sie|stell|stellen sie|füge|fügen sie|führe|führen sie|" +
			"starte|starten sie|installiere|installieren sie|erstelle|erstellen sie|lade|laden sie)"),
		// Not "bitte gib (mir) Bescheid" (please let me know).
		request("bitte (gib|geben sie) (mir|uns|)").nb("bescheid mir uns"),
		// Not "können Sie mir Bescheid geben" (could you let me know).
		request("(kannst du|können sie|könntest du|könnten sie|würdest du|würden sie) (mir|uns)").nb("bescheid"),
		request("(schick|schicke|schicken sie|sende|senden sie) (mir|uns)"),
		request("ich (brauche|benötige) (deine|ihre|eure) (hilfe|zustimmung|freigabe|zugangsdaten|bestätigung|entscheidung)"),
		request("(du musst|ihr müsst)"),
	},
	negators:          "nicht kein keine keinen keinem keiner keines nie niemals ohne kaum fast teilweise halb nichts",
	negAfter:          "nicht nie niemals",
	hypotheticals:     "wenn falls sobald nachdem bevor bis ob damit wird werden würde würden soll sollen könnte könnten hoffe hoffentlich muss müssen prüft prüfen überprüft testet",
	hypotheticalPairs: "um zu|stelle sicher|stellen sie sicher|sie sicher|zu prüfen|zu testen|stellt sicher",
	imperatives:       "prüfe prüfen teste testen stelle stellen führe führen",
	leadIns:           "bitte dann jetzt zuerst noch",
	conjunctions:      "und aber sondern weil da denn obwohl während jedoch deshalb also",
	linking:           "ist sind bin war waren wurde wurden jetzt nun alle alles bereits schon komplett vollständig erfolgreich habe hat haben",
	complementizers:   "dass",
}
