package finalblock

import "testing"

//nolint:misspell // the words are another language's
var _ = register("de", []langCase{
	// work
	{"Fertig.", []ks{d(ScopeWork, "Fertig")}},
	{"Der Fehler ist behoben.", []ks{d(ScopeWork, "behoben")}},
	{"Ich habe den Bug gefixt und alles ist erledigt.", []ks{d(ScopeWork, "gefixt"), d(ScopeWork, "erledigt")}},
	{"Das Feature ist implementiert.", []ks{d(ScopeWork, "implementiert")}},
	{"Es funktioniert jetzt.", []ks{d(ScopeWork, "Es funktioniert jetzt")}},
	{"Der Login funktioniert wieder.", []ks{d(ScopeWork, "funktioniert wieder")}},
	{"Die Funktion ist als Middleware implementiert.", nil},
	{"So funktioniert es: der Cache wird beim Start geladen.", nil},
	{"Es funktioniert noch nicht.", nil},
	{"Der Fehler ist noch nicht behoben.", nil},
	{"Ist es fertig?", nil},
	{"Sobald alles fertig ist, melde ich mich.", nil},
	{"Das fertige Modul liegt in pkg/x.", nil},
	{"Es ist fast fertig.", nil},
	{"Der Bug wird in Version 2 behoben.", nil},
	{"Der Login funktioniert jetzt nicht mehr.", nil},
	// tests
	{"Alle Tests sind grün.", []ks{d(ScopeTests, "Alle Tests sind grün")}},
	{"Die Tests laufen jetzt durch.", []ks{d(ScopeTests, "Die Tests laufen jetzt durch")}},
	{"Alle Tests bestanden.", []ks{d(ScopeTests, "Alle Tests bestanden")}},
	{"Alle Tests bestehen.", []ks{d(ScopeTests, "Alle Tests bestehen")}},
	{"Die Tests bestehen aus drei Teilen.", nil},
	{"Der Test prüft, ob der Build erfolgreich ist.", nil},
	{"Stellen Sie sicher, dass alle Tests grün sind.", nil},
	{"Die Tests sind nicht grün.", nil},
	{"Sind alle Tests grün?", nil},
	{"Nicht alle Tests laufen durch: zwei hängen am Timeout.", nil},
	// build
	{"Der Build ist grün.", []ks{d(ScopeBuild, "Der Build ist grün")}},
	{"Der Build läuft durch.", []ks{d(ScopeBuild, "Der Build läuft durch")}},
	{"Das Projekt kompiliert ohne Fehler.", []ks{d(ScopeBuild, "kompiliert ohne Fehler")}},
	{"Der Code kompiliert wieder.", []ks{d(ScopeBuild, "Der Code kompiliert wieder")}},
	{"Der Build läuft.", nil},
	{"Der Code kompiliert nicht.", nil},
	// deploy
	{"Ich habe die Änderung auf Produktion deployt.", []ks{d(ScopeDeploy, "auf Produktion deployt")}},
	{"Die neue Version ist jetzt live.", []ks{d(ScopeDeploy, "ist jetzt live")}},
	{"Wurde nach Staging ausgerollt.", []ks{d(ScopeDeploy, "nach Staging ausgerollt")}},
	{"Deployt auf Staging, Version 1.4.", []ks{d(ScopeDeploy, "Deployt auf Staging")}},
	{"Die Änderung wird nach dem Review auf Produktion deployt.", nil},
	{"Ist die Version schon live?", nil},
	{"Noch nicht deployt auf Staging – das kommt nach dem Review.", nil},
	{"Nichts davon ist live; alles liegt noch auf dem Branch.", nil},
	// merge
	{"Ich habe den Fix in main gemergt.", []ks{d(ScopeMerge, "in main gemergt")}},
	{"Der PR wurde gemergt.", []ks{d(ScopeMerge, "Der PR wurde gemergt")}},
	{"Gepusht nach main.", []ks{d(ScopeMerge, "Gepusht nach main")}},
	{"Ich habe noch nicht in main gemergt.", nil},
	{"Falls der PR gemergt wurde, bitte Bescheid geben.", nil},
	{"Noch nichts gepusht nach main; der Branch liegt nur lokal.", nil},
	// blocked
	{"Ich komme hier nicht weiter.", []ks{b("Ich komme hier nicht weiter")}},
	{"Ich kann nicht fortfahren, solange der Schlüssel fehlt.", []ks{b("Ich kann nicht fortfahren")}},
	{"Ich bin blockiert.", []ks{b("Ich bin blockiert")}},
	{"Wir stecken fest.", []ks{b("Wir stecken fest")}},
	{"Ich habe keinen Zugriff auf das Cluster.", []ks{b("Ich habe keinen Zugriff")}},
	{"Mir fehlen die Berechtigungen.", []ks{b("Mir fehlen die Berechtigungen")}},
	{"Ich bin nicht blockiert.", nil},
	{"Wenn ich nicht weiterkomme, melde ich mich.", nil},
	{"Ich konnte die Tests hier nicht ausführen; nichts ist verifiziert.", nil},
	{"Mir fehlen die Berechtigungen nicht; das Problem ist der abgelaufene Token.", nil},
	// delegation
	{"Bitte schicken Sie mir den API-Schlüssel.", []ks{q("Bitte schicken Sie")}},
	{"Könnten Sie mir den Token geben?", []ks{q("Könnten Sie mir")}},
	{"Schick mir die Logs.", []ks{q("Schick mir")}},
	{"Ich brauche Ihre Freigabe für das Deployment.", []ks{q("Ich brauche Ihre Freigabe")}},
	{"Du musst den Server neu starten.", []ks{q("Du musst")}},
	{"Bitte prüfen Sie den Diff.", nil},
	{"Ich brauche keine Hilfe.", nil},
	{"Ich brauche Ihre Freigabe nicht mehr; der Deploy läuft über CI.", nil},
	{"Du musst den Server nicht neu starten; die Konfiguration wird automatisch neu geladen.", nil},
	{"Bitte gib Bescheid, ob ich die Migration auch anpassen soll.", nil},
	{"```\nAlle Tests sind grün.\n```", nil},
	{"Die Datei `fertig.go` enthält den Code.", nil},
})

func TestPhrasesGerman(t *testing.T) { runLang(t, "de") }
