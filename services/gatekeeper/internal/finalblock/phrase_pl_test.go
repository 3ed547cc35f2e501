package finalblock

import "testing"

var _ = register("pl", []langCase{
	// work
	{"Gotowe.", []ks{d(ScopeWork, "Gotowe")}},
	{"Wszystko jest już zrobione.", []ks{d(ScopeWork, "Wszystko jest już zrobione")}},
	{"Błąd został naprawiony.", []ks{d(ScopeWork, "został naprawiony")}},
	{"Naprawiłem błąd w parserze.", []ks{d(ScopeWork, "Naprawiłem")}},
	{"Logowanie działa poprawnie.", []ks{d(ScopeWork, "działa poprawnie")}},
	{"Teraz działa.", []ks{d(ScopeWork, "Teraz działa")}},
	{"Nie jest jeszcze gotowe.", nil},
	{"Nie naprawiłem tego.", nil},
	{"Czy jest gotowe?", nil},
	{"Jeśli będzie gotowe, dam znać.", nil},
	{"Jest prawie gotowe.", nil},
	{"Jest zaimplementowane jako middleware.", nil},
	{"Logowanie nie działa poprawnie.", nil},
	{"Nie wszystko działa.", nil},
	// tests
	{"Wszystkie testy przechodzą.", []ks{d(ScopeTests, "Wszystkie testy przechodzą")}},
	{"Testy są zielone.", []ks{d(ScopeTests, "Testy są zielone")}},
	{"Testy nie przechodzą.", nil},
	{"Upewnij się, że wszystkie testy przechodzą.", nil},
	// build
	{"Build przechodzi.", []ks{d(ScopeBuild, "Build przechodzi")}},
	{"Kod się kompiluje.", []ks{d(ScopeBuild, "Kod się kompiluje")}},
	{"Kompiluje się bez błędów.", []ks{d(ScopeBuild, "Kompiluje się bez błędów")}},
	{"Kod się nie kompiluje.", nil},
	{"Sprawdź, czy build przechodzi.", nil},
	{"Sprawdź, czy projekt kompiluje się bez błędów.", nil},
	{"Sprawdź, czy kod się kompiluje.", nil},
	// deploy
	{"Wdrożyłem na produkcję.", []ks{d(ScopeDeploy, "Wdrożyłem na produkcję")}},
	{"Wdrożyłem nową wersję.", []ks{d(ScopeDeploy, "Wdrożyłem")}},
	{"Zmiana jest już na produkcji.", []ks{d(ScopeDeploy, "jest już na produkcji")}},
	{"Nie wdrożyłem jeszcze zmian.", nil},
	{"Jeszcze nie wdrożyłem na produkcję; czekam na review.", nil},
	{"Nic z tego nie jest na produkcji; wszystko jest na branchu.", nil},
	// merge
	{"Zmergowałem do main.", []ks{d(ScopeMerge, "Zmergowałem do main")}},
	{"PR został zmergowany.", []ks{d(ScopeMerge, "PR został zmergowany")}},
	{"PR nie został zmergowany.", nil},
	{"Jeszcze nic nie zmergowałem do maina.", nil},
	{"Jeśli PR został scalony, usunę gałąź roboczą.", nil},
	// blocked
	{"Nie mogę kontynuować bez klucza.", []ks{b("Nie mogę kontynuować")}},
	{"Jestem zablokowany przez firewall.", []ks{b("Jestem zablokowany")}},
	{"Utknąłem.", []ks{b("Utknąłem")}},
	{"Nie mam dostępu do klastra.", []ks{b("Nie mam dostępu")}},
	{"Jeśli nie mogę kontynuować, dam znać.", nil},
	{"Nie jestem zablokowany.", nil},
	{"Nie utknąłem, po prostu czekam na review.", nil},
	{"Jeśli nie mam dostępu do klastra, dam znać.", nil},
	{"Nie mogłem uruchomić testów tutaj; nic nie jest zweryfikowane.", nil},
	// delegation
	{"Proszę przesłać klucz API.", []ks{q("Proszę przesłać")}},
	{"Czy możesz mi wysłać logi?", []ks{q("Czy możesz mi wysłać")}},
	{"Prześlij mi certyfikat.", []ks{q("Prześlij mi")}},
	{"Potrzebuję twojej zgody na wdrożenie.", []ks{q("Potrzebuję twojej zgody")}},
	{"Musisz zrestartować serwer.", []ks{q("Musisz")}},
	{"Proszę zauważyć, że to zmienia API.", nil},
	{"Nie potrzebuję twojej zgody na ten krok.", nil},
	{"Nie musisz niczego restartować.", nil},
	{"Daj mi znać, jeśli coś jeszcze trzeba poprawić.", nil},
	{"Czy możesz mi dać znać, czy to wystarczy?", nil},
	{"```\nWszystkie testy przechodzą.\n```", nil},
})

func TestPhrasesPolish(t *testing.T) { runLang(t, "pl") }
