package finalblock

// dutch is the reviewed Dutch table.
//
//nolint:misspell // the words are another language's
var dutch = langSpec{
	tag: "nl",
	rules: []rule{
		// work
		done(ScopeWork, "(is|zijn|ben) (nu |al |helemaal |volledig |)(klaar|afgerond|voltooid|opgelost|gefixt|gerepareerd|"+
			"geïmplementeerd)").nb("om met via door als"),
		done(ScopeWork, "(heb|hebben) (het |de bug |het probleem |de fout |dit |)(opgelost|gefixt|gerepareerd|afgerond|"+
			"geïmplementeerd|voltooid)"),
		done(ScopeWork, "(klaar|afgerond|opgelost)").pred().nb("om met via door als"),
		done(ScopeWork, "(werkt|functioneert) (nu|weer|correct|goed|zoals verwacht)"),
		done(ScopeWork, "(het|alles|dit) werkt").fin(),
		// tests
		done(ScopeTests, "(alle |de |)tests (slagen|slaagden|zijn geslaagd|zijn groen|draaien groen|lopen groen|gaan goed|zijn succesvol)"),
		// build
		done(ScopeBuild, "(de |)(build|compilatie) (slaagt|is geslaagd|is groen|werkt|lukt|is gelukt|is succesvol)"),
		done(ScopeBuild, "compileert (zonder fouten|foutloos|zonder waarschuwingen|correct)"),
		// deploy
		done(ScopeDeploy, "(naar|op|in) (productie|prod|staging|acceptatie) (gedeployed|gedeployd|uitgerold|uitgebracht|gezet)"),
		done(ScopeDeploy, "(gedeployed|gedeployd|uitgerold) (naar|op|in) (productie|prod|staging)"),
		done(ScopeDeploy, "(is|zijn|staat) (nu |)(live|gedeployed|gedeployd|uitgerold|in productie)").fin(),
		// merge
		done(ScopeMerge, "(naar|in|op) (main|master) (gemerged|gemerget|gemergd|samengevoegd|gepusht|gepushed)"),
		done(ScopeMerge, "(gemerged|gemerget|gemergd|samengevoegd|gepusht|gepushed) (naar|in|op) (main|master)"),
		done(ScopeMerge, "(de pr|de pull request|de branch) is (gemerged|gemerget|gemergd|samengevoegd)"),
		// blocked
		blocked("(ik|we|wij) (kan|kunnen) niet (verder|doorgaan)"),
		blocked("(ik zit|we zitten|wij zitten) (nog |)vast"),
		blocked("(ik ben|we zijn|wij zijn) (nog |)geblokkeerd"),
		// Not "ik heb geen toegang nodig" (I need no access).
		blocked("(ik|we|wij) (heb|hebben) geen (toegang|rechten|toestemming|credentials|inloggegevens)").nb("nodig"),
		// delegation
		// Not "kun je me laten weten" (could you let me know).
		request("(kun je|kunt u|zou je|zou u|wil je|wilt u|kunnen jullie) (mij|me|ons)").nb("laten"),
		request("(stuur|geef|stuurt u|geeft u) (me|mij|ons)"),
		request("ik heb (je|jouw|uw) (hulp|goedkeuring|toestemming|toegang|input|bevestiging) nodig"),
		request("(je moet|u moet|jullie moeten)"),
	},
	negators:          "niet geen nooit zonder bijna gedeeltelijk deels nauwelijks half niets",
	negAfter:          "niet nooit",
	hypotheticals:     "als wanneer zodra nadat voordat totdat tot of zal zullen zou zouden moet moeten hoop hopelijk controleer",
	hypotheticalPairs: "om te|zorg ervoor|zorg dat",
	imperatives:       "controleer test draai",
	leadIns:           "dan nu eerst",
	conjunctions:      "en maar dus want omdat hoewel terwijl daarna",
	linking:           "is zijn ben was waren nu al helemaal volledig alles heb hebben",
	complementizers:   "dat",
}
