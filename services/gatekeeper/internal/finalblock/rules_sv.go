package finalblock

// swedish is the reviewed Swedish table.
//
//nolint:misspell // the words are another language's
var swedish = langSpec{
	tag: "sv",
	rules: []rule{
		// work
		done(ScopeWork, "(är|blev) (nu |redan |helt |)(klart|klar|klara|färdigt|färdig|färdiga|fixat|fixad|löst|åtgärdat|åtgärdad|"+
			"implementerat|implementerad)").nb("att med via som genom"),
		done(ScopeWork, "(jag har|vi har) (nu |redan |)(fixat|löst|åtgärdat|implementerat|färdigställt|slutfört|rättat)"),
		done(ScopeWork, "(klart|färdigt|fixat)").pred().nb("att"),
		done(ScopeWork, "(fungerar|funkar) (nu|igen|korrekt|som förväntat|bra)"),
		done(ScopeWork, "(det|allt) (fungerar|funkar)").fin(),
		// tests
		done(ScopeTests, "(alla |)(testerna|tester|testfallen) (går igenom|gick igenom|passerar|passerade|är gröna|lyckas|lyckades|"+
			"är godkända)"),
		// build
		done(ScopeBuild, "(bygget|builden|kompileringen) (går igenom|gick igenom|lyckas|lyckades|är grönt|är grön|fungerar)"),
		done(ScopeBuild, "kompilerar (utan fel|felfritt|utan varningar|korrekt)"),
		// deploy
		done(ScopeDeploy, "(driftsatt|driftsatte|deployat|deployade|deployad|utrullat|rullat ut|publicerat|publicerad|släppt) (till|i|på) "+
			"(produktion|prod|staging)"),
		done(ScopeDeploy, "(jag har|vi har) (driftsatt|deployat|rullat ut|publicerat|släppt)"),
		done(ScopeDeploy, "(är|ligger) (nu |)(live|i produktion|driftsatt|deployad)").fin(),
		// merge
		done(ScopeMerge, "(mergat|mergeat|mergade|sammanfogat|pushat|pushade) (till|in i|i|mot) (main|master)"),
		done(ScopeMerge, "(jag har|vi har) (mergat|mergeat|pushat|sammanfogat)"),
		done(ScopeMerge, "(pull requesten|branchen|grenen|ändringen) är (mergad|mergead|sammanfogad)"),
		// blocked
		blocked("(jag|vi) kan inte (fortsätta|gå vidare|komma vidare)"),
		blocked("(jag|vi) (sitter|satt) fast"),
		blocked("(jag är|vi är) (blockerad|blockerade)"),
		blocked("(jag|vi) (har inte|saknar) (åtkomst|behörighet|behörigheter|rättigheter|inloggningsuppgifter)"),
		blocked("(jag|vi) har (ingen|inga) (åtkomst|behörighet|behörigheter)"),
		// delegation
		// A question starts its clause; after a word, "kan du" is inverted
		// ("nu kan du köra testerna": now you can run the tests).
		request("(kan du|kan ni|skulle du kunna|skulle ni kunna) (skicka|ge|dela|köra|lägga till|skapa|starta om|installera|konfigurera)").
			na("nu sedan då här därefter så vill"),
		// Not "ge mig besked" (let me know).
		request("(skicka|ge) (mig|oss)").nb("besked"),
		request("jag behöver (att du|att ni|din hjälp|ditt godkännande|din bekräftelse)"),
		request("du (måste|behöver)"),
	},
	negators:          "inte ej aldrig ingen inga inget utan nästan delvis knappt halvt",
	negAfter:          "inte aldrig ej",
	hypotheticals:     "om när innan efter tills ska skall kommer skulle måste behöver hoppas förhoppningsvis kontrollera",
	hypotheticalPairs: "så fort|se till|för att",
	imperatives:       "kontrollera testa kör se",
	leadIns:           "sedan nu först",
	conjunctions:      "och men så eftersom fast medan därför",
	linking:           "är var blev nu redan helt allt har",
	complementizers:   "att",
}
