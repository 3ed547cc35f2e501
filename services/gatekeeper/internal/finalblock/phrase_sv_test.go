package finalblock

import "testing"

//nolint:misspell // the words are another language's
var _ = register("sv", []langCase{
	// work
	{"Det är klart.", []ks{d(ScopeWork, "är klart")}},
	{"Klart!", []ks{d(ScopeWork, "Klart")}},
	{"Jag har fixat buggen.", []ks{d(ScopeWork, "Jag har fixat")}},
	{"Inloggningen fungerar igen.", []ks{d(ScopeWork, "fungerar igen")}},
	{"Allt fungerar.", []ks{d(ScopeWork, "Allt fungerar")}},
	{"Det är klart att vi behöver fler tester.", nil},
	{"Det är inte klart.", nil},
	{"Det fungerar inte.", nil},
	{"Är det klart?", nil},
	{"När det är klart hör jag av mig.", nil},
	{"Det är nästan klart.", nil},
	{"Jag vet inte om jag har löst grundorsaken.", nil},
	{"Inget fungerar korrekt efter uppgraderingen.", nil},
	// tests
	{"Alla tester går igenom.", []ks{d(ScopeTests, "Alla tester går igenom")}},
	{"Testerna är gröna.", []ks{d(ScopeTests, "Testerna är gröna")}},
	{"Testerna går inte igenom.", nil},
	{"Kontrollera att alla tester går igenom.", nil},
	// build
	{"Bygget gick igenom.", []ks{d(ScopeBuild, "Bygget gick igenom")}},
	{"Koden kompilerar utan fel.", []ks{d(ScopeBuild, "kompilerar utan fel")}},
	{"Bygget fungerar inte.", nil},
	{"Kontrollera att koden kompilerar utan fel.", nil},
	// deploy
	{"Driftsatt till produktion.", []ks{d(ScopeDeploy, "Driftsatt till produktion")}},
	{"Jag har deployat den nya versionen.", []ks{d(ScopeDeploy, "Jag har deployat")}},
	{"Tjänsten är nu live.", []ks{d(ScopeDeploy, "är nu live")}},
	{"Om det är driftsatt till produktion kan vi testa.", nil},
	{"Om vi har deployat fel version måste vi rulla tillbaka.", nil},
	// merge
	{"Mergat till main.", []ks{d(ScopeMerge, "Mergat till main")}},
	{"Jag har pushat ändringarna.", []ks{d(ScopeMerge, "Jag har pushat")}},
	{"Pull requesten är mergad.", []ks{d(ScopeMerge, "Pull requesten är mergad")}},
	{"Jag har inte mergat något.", nil},
	{"Inget är mergat till main än.", nil},
	{"När vi har mergat pull requesten driftsätter vi.", nil},
	{"När pull requesten är mergad kan vi driftsätta.", nil},
	// blocked
	{"Jag kan inte fortsätta utan nyckeln.", []ks{b("Jag kan inte fortsätta")}},
	{"Jag sitter fast.", []ks{b("Jag sitter fast")}},
	{"Jag är blockerad av brandväggen.", []ks{b("Jag är blockerad")}},
	{"Jag saknar behörighet till klustret.", []ks{b("Jag saknar behörighet")}},
	{"Jag har ingen åtkomst till databasen.", []ks{b("Jag har ingen åtkomst")}},
	{"Jag kunde inte köra testerna här; inget är verifierat.", nil},
	{"Om jag är blockerad hör jag av mig.", nil},
	{"Om jag saknar behörighet till klustret säger jag till.", nil},
	{"Om jag sitter fast hör jag av mig.", nil},
	// delegation
	{"Kan du skicka API-nyckeln?", []ks{q("Kan du skicka")}},
	{"Skicka mig loggarna.", []ks{q("Skicka mig")}},
	{"Jag behöver ditt godkännande.", []ks{q("Jag behöver ditt godkännande")}},
	{"Du måste starta om servern.", []ks{q("Du måste")}},
	{"Granska diffen.", nil},
	{"Ge mig besked om du vill ha fler ändringar.", nil},
	{"Nu kan du köra make test för att verifiera ändringen.", nil},
	{"Om du vill kan du köra testerna själv.", nil},
	{"Du behöver inte starta om servern.", nil},
	{"```\nAlla tester går igenom.\n```", nil},
})

func TestPhrasesSwedish(t *testing.T) { runLang(t, "sv") }
