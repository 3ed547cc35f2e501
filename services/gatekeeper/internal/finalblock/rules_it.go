package finalblock

// italian is the reviewed Italian table.
//
//nolint:misspell // the words are another language's
var italian = langSpec{
	tag: "it",
	rules: []rule{
		// work
		done(ScopeWork, "(è|sono) (ora |adesso |già |tutto |)(fatto|finito|completato|completata|terminato|terminata|risolto|risolta|"+
			"sistemato|sistemata|implementato|implementata)").nb("da con in come tramite mediante per"),
		done(ScopeWork, "(è|sono) (ora |adesso |già |)(pronto|pronta|pronti|pronte)"),
		done(ScopeWork, "(ho|abbiamo) (già |ora |)(finito|completato|terminato|risolto|sistemato|implementato|corretto|aggiustato|fixato)"),
		done(ScopeWork, "(fatto|finito|completato)").pred().na("il un del lo"),
		done(ScopeWork, "funziona (ora|adesso|correttamente|bene|di nuovo|come previsto)"),
		done(ScopeWork, "(ora|adesso|tutto) funziona").fin(),
		// tests
		done(ScopeTests, "(tutti i |i |)test (ora |adesso |)(passano|sono passati|sono superati|sono verdi|hanno successo|"+
			"vanno a buon fine)"),
		// build
		done(ScopeBuild, "(la build|il build|la compilazione) (ora |)(passa|è passata|funziona|è verde|è riuscita|va a buon fine)"),
		done(ScopeBuild, "compila (senza errori|correttamente|senza warning)"),
		// deploy
		done(ScopeDeploy, "(deployato|deployata|rilasciato|rilasciata|distribuito|distribuita|pubblicato|pubblicata|messo|messa) (in|su) "+
			"(produzione|prod|staging)"),
		done(ScopeDeploy, "(ho|abbiamo) (fatto il deploy|deployato|rilasciato|pubblicato|distribuito)"),
		done(ScopeDeploy, "(è|sono) (ora |)(in produzione|online|deployato|deployata)").fin(),
		// merge
		done(ScopeMerge, "(mergiato|mergiata|unito|unita|integrato|integrata|pushato|pushata) (in|su|nel|nel branch) (main|master)"),
		done(ScopeMerge, "(ho|abbiamo) (fatto il merge|fatto merge|mergiato|fatto il push|pushato)"),
		done(ScopeMerge, "(la pr|la pull request|il branch|la merge request) (è stata|è stato|è) (mergiata|mergiato|unita|integrata)"),
		// blocked
		blocked("non (posso|possiamo|riesco|riusciamo) (a |)(continuare|procedere|proseguire|andare avanti)"),
		blocked("(sono|siamo) (bloccato|bloccata|bloccati|fermo|ferma|fermi)"),
		blocked("non (ho|abbiamo) (accesso|i permessi|permessi|le credenziali|i diritti)"),
		// delegation
		request("per favore (invia|inviami|manda|mandami|fornisci|forniscimi|esegui|condividi|aggiungi|crea|riavvia|installa|" +
			"configura|dammi)"),
		request("(puoi|potresti|potete|potreste) (inviarmi|mandarmi|fornirmi|darmi|passarmi|eseguire|condividere|aggiungere|creare|" +
			"riavviare|installare|configurare|inviare|fornire)"),
		request("(inviami|mandami|dammi|forniscimi|passami)"),
		request("ho bisogno che (tu|lei|voi)"),
		request("(dovrai|dovrete)"),
	},
	negators:          "non mai nessun nessuno nessuna niente nulla senza quasi parzialmente né",
	hypotheticals:     "se quando appena dopo prima finché sarà saranno sarebbe sarebbero deve devono bisogna verifica verificate assicurati assicuratevi spero",
	hypotheticalPairs: "una volta|per verificare|per assicurarsi|per controllare",
	imperatives:       "verifica verificate controlla controllate esegui eseguite",
	leadIns:           "poi ora adesso prima",
	conjunctions:      "e ma quindi perché poiché però mentre",
	linking:           "è sono era erano ora adesso già tutto ho abbiamo stato stata",
	complementizers:   "che",
}
