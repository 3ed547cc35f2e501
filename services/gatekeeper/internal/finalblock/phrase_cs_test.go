package finalblock

import "testing"

var _ = register("cs", []langCase{
	// work
	{"Hotovo.", []ks{d(ScopeWork, "Hotovo")}},
	{"Chyba je opravená.", []ks{d(ScopeWork, "je opravená")}},
	{"Opravil jsem chybu v parseru.", []ks{d(ScopeWork, "Opravil jsem")}},
	{"Chybu jsem opravil.", []ks{d(ScopeWork, "jsem opravil")}},
	{"Přihlášení funguje správně.", []ks{d(ScopeWork, "funguje správně")}},
	{"Teď už to funguje.", []ks{d(ScopeWork, "to funguje")}},
	{"Ještě to není hotové.", nil},
	{"Nefunguje to.", nil},
	{"Je to hotovo?", nil},
	{"Až bude hotovo, dám vědět.", nil},
	{"Je skoro hotovo.", nil},
	{"Pokud je opraveno i na stagingu, zavřu ticket.", nil},
	{"Nevím, jestli jsem opravil správnou příčinu.", nil},
	{"Ne všechno funguje správně.", nil},
	{"Ověřte, že vše funguje.", nil},
	// tests
	{"Všechny testy prošly.", []ks{d(ScopeTests, "Všechny testy prošly")}},
	{"Testy jsou zelené.", []ks{d(ScopeTests, "Testy jsou zelené")}},
	{"Testy neprošly.", nil},
	{"Ověřte, že všechny testy prošly.", nil},
	// build
	{"Build prošel.", []ks{d(ScopeBuild, "Build prošel")}},
	{"Kód se kompiluje.", []ks{d(ScopeBuild, "Kód se kompiluje")}},
	{"Kompiluje se bez chyb.", []ks{d(ScopeBuild, "Kompiluje se bez chyb")}},
	{"Build neprošel.", nil},
	{"Ne vše se sestaví: build pro Windows padá.", nil},
	{"Zkontrolujte, zda se kód kompiluje bez chyb.", nil},
	{"Zkontrolujte, zda build prošel.", nil},
	// deploy
	{"Nasazeno do produkce.", []ks{d(ScopeDeploy, "Nasazeno do produkce")}},
	{"Nasadil jsem novou verzi.", []ks{d(ScopeDeploy, "Nasadil jsem")}},
	{"Služba je už v produkci.", []ks{d(ScopeDeploy, "je už v produkci")}},
	{"Pokud je to nasazeno do produkce, otestuji to.", nil},
	{"Pokud je už nasazeno, otestuji to na produkci.", nil},
	// merge
	{"Mergnuto do main.", []ks{d(ScopeMerge, "Mergnuto do main")}},
	{"Sloučil jsem větev.", []ks{d(ScopeMerge, "Sloučil jsem")}},
	{"PR byl sloučen.", []ks{d(ScopeMerge, "PR byl sloučen")}},
	{"PR nebyl sloučen.", nil},
	{"Ne každý PR byl sloučen; dva čekají na review.", nil},
	{"Až bude sloučeno do mainu, nasadím to na staging.", nil},
	// blocked
	{"Nemohu pokračovat bez klíče.", []ks{b("Nemohu pokračovat")}},
	{"Jsem zablokovaný firewallem.", []ks{b("Jsem zablokovaný")}},
	{"Zasekl jsem se.", []ks{b("Zasekl jsem se")}},
	{"Nemám přístup ke clusteru.", []ks{b("Nemám přístup")}},
	{"Pokud nemohu pokračovat, dám vědět.", nil},
	{"Pokud jsem zaseknutý, ozvu se.", nil},
	{"Pokud nemám přístup ke clusteru, dám vědět.", nil},
	{"Nemohl jsem tu spustit testy; nic není ověřeno.", nil},
	// delegation
	{"Prosím pošlete mi API klíč.", []ks{q("Prosím pošlete")}},
	{"Můžete mi poslat logy?", []ks{q("Můžete mi poslat")}},
	{"Pošlete mi certifikát.", []ks{q("Pošlete mi")}},
	{"Potřebuji váš souhlas s nasazením.", []ks{q("Potřebuji váš souhlas")}},
	{"Budete muset restartovat server.", []ks{q("Budete muset")}},
	{"Prosím zkontrolujte diff.", nil},
	{"Dejte mi vědět, jestli chcete ještě něco upravit.", nil},
	{"Můžete mi dát vědět, jestli je to takhle v pořádku?", nil},
	{"```\nVšechny testy prošly.\n```", nil},
})

func TestPhrasesCzech(t *testing.T) { runLang(t, "cs") }
