package finalblock

import "testing"

//nolint:misspell // the words are another language's
var _ = register("nl", []langCase{
	// work
	{"Het is klaar.", []ks{d(ScopeWork, "is klaar")}},
	{"Klaar.", []ks{d(ScopeWork, "Klaar")}},
	{"Ik heb het opgelost.", []ks{d(ScopeWork, "heb het opgelost")}},
	{"De login werkt weer.", []ks{d(ScopeWork, "werkt weer")}},
	{"Alles werkt.", []ks{d(ScopeWork, "Alles werkt")}},
	{"Het is nog niet klaar.", nil},
	{"Het werkt niet.", nil},
	{"Is het klaar?", nil},
	{"Zodra het klaar is, laat ik het weten.", nil},
	{"Ik ben klaar om te beginnen.", nil},
	{"Het is bijna klaar.", nil},
	{"Zodra ik het heb opgelost, laat ik het weten.", nil},
	{"De login werkt nu niet meer.", nil},
	// tests
	{"Alle tests slagen.", []ks{d(ScopeTests, "Alle tests slagen")}},
	{"De tests zijn groen.", []ks{d(ScopeTests, "De tests zijn groen")}},
	{"De tests slagen niet.", nil},
	{"Controleer of alle tests slagen.", nil},
	// build
	{"De build is geslaagd.", []ks{d(ScopeBuild, "De build is geslaagd")}},
	{"Het project compileert zonder fouten.", []ks{d(ScopeBuild, "compileert zonder fouten")}},
	{"De build werkt niet.", nil},
	{"Niet alles compileert zonder fouten: de Windows-build faalt.", nil},
	// deploy
	{"Ik heb het naar productie gedeployed.", []ks{d(ScopeDeploy, "naar productie gedeployed")}},
	{"Uitgerold naar staging.", []ks{d(ScopeDeploy, "Uitgerold naar staging")}},
	{"De site staat live.", []ks{d(ScopeDeploy, "staat live")}},
	{"Als het naar productie gedeployed is, test ik opnieuw.", nil},
	{"Nog niet uitgerold naar productie.", nil},
	{"Niets hiervan is live; alles staat nog op de branch.", nil},
	// merge
	{"Ik heb de fix naar main gemerged.", []ks{d(ScopeMerge, "naar main gemerged")}},
	{"Gepusht naar main.", []ks{d(ScopeMerge, "Gepusht naar main")}},
	{"De PR is gemerged.", []ks{d(ScopeMerge, "De PR is gemerged")}},
	{"De PR is nog niet gemerged.", nil},
	{"Er is nog niets naar main gepusht.", nil},
	{"Nog niet gemerged naar main; de review loopt nog.", nil},
	{"Zodra de PR is gemerged, deploy ik naar staging.", nil},
	// blocked
	{"Ik kan niet verder zonder de sleutel.", []ks{b("Ik kan niet verder")}},
	{"Ik zit vast.", []ks{b("Ik zit vast")}},
	{"Ik ben geblokkeerd door de firewall.", []ks{b("Ik ben geblokkeerd")}},
	{"Ik heb geen toegang tot het cluster.", []ks{b("Ik heb geen toegang")}},
	{"Als ik niet verder kan, laat ik het weten.", nil},
	{"Ik kon de tests hier niet draaien; niets is geverifieerd.", nil},
	{"Ik heb geen toegang nodig tot productie; alles draait lokaal.", nil},
	{"Als ik ben geblokkeerd, laat ik het weten.", nil},
	// delegation
	{"Kun je me de API-sleutel sturen?", []ks{q("Kun je me")}},
	{"Stuur me de logs.", []ks{q("Stuur me")}},
	{"Ik heb je goedkeuring nodig.", []ks{q("Ik heb je goedkeuring nodig")}},
	{"Je moet de server herstarten.", []ks{q("Je moet")}},
	{"Bekijk de diff.", nil},
	{"Kun je me laten weten of je nog wijzigingen wilt?", nil},
	{"Je moet de server niet herstarten; de configuratie wordt automatisch herladen.", nil},
	{"```\nAlle tests slagen.\n```", nil},
})

func TestPhrasesDutch(t *testing.T) { runLang(t, "nl") }
