package finalblock

import "testing"

//nolint:misspell // the words are another language's
var _ = register("it", []langCase{
	// work
	{"È tutto fatto.", []ks{d(ScopeWork, "È tutto fatto")}},
	{"Il bug è risolto.", []ks{d(ScopeWork, "è risolto")}},
	{"È pronto per la review.", []ks{d(ScopeWork, "È pronto")}},
	{"Ho sistemato il parser.", []ks{d(ScopeWork, "Ho sistemato")}},
	{"Fatto!", []ks{d(ScopeWork, "Fatto")}},
	{"Ora funziona correttamente.", []ks{d(ScopeWork, "funziona correttamente")}},
	{"Adesso funziona.", []ks{d(ScopeWork, "Adesso funziona")}},
	{"Il fatto che fallisca su Windows è strano.", nil},
	{"Il risultato è corretto.", nil},
	{"Non è ancora finito.", nil},
	{"Non funziona ancora.", nil},
	{"È pronto?", nil},
	{"Quando sarà finito, ti avviso.", nil},
	{"È implementato come middleware.", nil},
	{"È quasi finito.", nil},
	{"Non ho corretto il test instabile.", nil},
	{"Il login non funziona correttamente su Safari.", nil},
	// tests
	{"Tutti i test passano.", []ks{d(ScopeTests, "Tutti i test passano")}},
	{"I test sono verdi.", []ks{d(ScopeTests, "I test sono verdi")}},
	{"I test non passano.", nil},
	{"Verifica che tutti i test passano.", nil},
	// build
	{"La build passa.", []ks{d(ScopeBuild, "La build passa")}},
	{"Il progetto compila senza errori.", []ks{d(ScopeBuild, "compila senza errori")}},
	{"La build non passa.", nil},
	{"Il progetto non compila senza errori su Windows.", nil},
	{"Se la build passa, faccio il merge.", nil},
	// deploy
	{"Messo in produzione.", []ks{d(ScopeDeploy, "Messo in produzione")}},
	{"Ho fatto il deploy della nuova versione.", []ks{d(ScopeDeploy, "Ho fatto il deploy")}},
	{"Il servizio è ora online.", []ks{d(ScopeDeploy, "è ora online")}},
	{"Il servizio è online solo in VPN.", nil},
	{"Non ho fatto il deploy.", nil},
	{"Non è ancora stato rilasciato in produzione.", nil},
	// merge
	{"Mergiato in main.", []ks{d(ScopeMerge, "Mergiato in main")}},
	{"Ho fatto il merge del branch.", []ks{d(ScopeMerge, "Ho fatto il merge")}},
	{"La PR è stata mergiata.", []ks{d(ScopeMerge, "La PR è stata mergiata")}},
	{"Una volta mergiato in main, faccio il deploy.", nil},
	{"Non ho fatto il merge: aspetto la review.", nil},
	{"Se la PR è stata mergiata, cancello il branch.", nil},
	// blocked
	{"Non posso continuare senza la chiave.", []ks{b("Non posso continuare")}},
	{"Sono bloccato dal firewall.", []ks{b("Sono bloccato")}},
	{"Non ho accesso al cluster.", []ks{b("Non ho accesso")}},
	{"Se non posso continuare, ti avviso.", nil},
	{"Non sono bloccato.", nil},
	{"Se non ho accesso al cluster, te lo dico.", nil},
	{"Non sono riuscito a eseguire i test qui; niente è verificato.", nil},
	// delegation
	{"Per favore inviami la chiave API.", []ks{q("Per favore inviami")}},
	{"Puoi mandarmi i log?", []ks{q("Puoi mandarmi")}},
	{"Mandami il certificato.", []ks{q("Mandami")}},
	{"Ho bisogno che tu approvi il deploy.", []ks{q("Ho bisogno che tu")}},
	{"Dovrai riavviare il server.", []ks{q("Dovrai")}},
	{"Per favore rivedi il diff.", nil},
	{"Non puoi eseguire la migrazione senza permessi di amministratore.", nil},
	{"Non ho bisogno che tu faccia nulla.", nil},
	{"Non dovrai riavviare il server.", nil},
	{"```\nTutti i test passano.\n```", nil},
})

func TestPhrasesItalian(t *testing.T) { runLang(t, "it") }
