package finalblock

import "testing"

var _ = register("tr", []langCase{
	// work
	{"Tamamlandı.", []ks{d(ScopeWork, "Tamamlandı")}},
	{"TAMAMLANDI", []ks{d(ScopeWork, "TAMAMLANDI")}},
	{"Hata düzeltildi.", []ks{d(ScopeWork, "düzeltildi")}},
	{"Her şey hazır.", []ks{d(ScopeWork, "hazır")}},
	{"Parser'daki hatayı düzelttim.", []ks{d(ScopeWork, "düzelttim")}},
	{"Giriş artık çalışıyor.", []ks{d(ScopeWork, "artık çalışıyor")}},
	{"Henüz tamamlanmadı.", nil},
	{"Tamamlandı mı?", nil},
	{"Hazır değil.", nil},
	{"Hazır bir kütüphane kullandım.", nil},
	{"Ekip üzerinde çalışıyor.", nil},
	{"Tamamlandığında haber vereceğim.", nil},
	{"Doğru şeyi düzelttim mi, emin değilim.", nil},
	{"Giriş artık çalışıyor mu diye kontrol ettim; hâlâ hata veriyor.", nil},
	// tests
	{"Tüm testler geçti.", []ks{d(ScopeTests, "Tüm testler geçti")}},
	{"Testler başarılı.", []ks{d(ScopeTests, "Testler başarılı")}},
	{"Testler geçmedi.", nil},
	{"Testler başarılı değil.", nil},
	{"Testler geçti mi?", nil},
	{"Testler yeşil ise PR'ı birleştirebiliriz.", nil},
	// build
	{"Build başarılı.", []ks{d(ScopeBuild, "Build başarılı")}},
	{"Kod hatasız derleniyor.", []ks{d(ScopeBuild, "hatasız derleniyor")}},
	{"Proje derleniyor.", []ks{d(ScopeBuild, "Proje derleniyor")}},
	{"Derleme başarısız.", nil},
	{"Kod hatasız derlendi mi, henüz bilmiyorum.", nil},
	{"Proje derleniyor mu?", nil},
	{"Build başarılı değil; iki test hâlâ kırmızı.", nil},
	{"Build başarılı olursa main'e merge edeceğim.", nil},
	// deploy
	{"Değişikliği prod'a deploy ettim.", []ks{d(ScopeDeploy, "prod'a deploy ettim")}},
	{"Yeni sürüm canlıya alındı.", []ks{d(ScopeDeploy, "canlıya alındı")}},
	{"Deploy edildi.", []ks{d(ScopeDeploy, "Deploy edildi")}},
	{"Deploy edilmedi.", nil},
	{"Staging'e deploy edildi mi diye loglara baktım; henüz edilmemiş.", nil},
	// merge
	{"Düzeltmeyi main'e merge ettim.", []ks{d(ScopeMerge, "main'e merge ettim")}},
	{"Değişiklikler birleştirildi.", []ks{d(ScopeMerge, "birleştirildi")}},
	{"Merge edildi mi?", nil},
	{"Main'e merge edildi mi?", nil},
	// blocked
	{"Anahtar olmadan devam edemiyorum.", []ks{b("devam edemiyorum")}},
	{"Takıldım.", []ks{b("Takıldım")}},
	{"Kümeye erişimim yok.", []ks{b("erişimim yok")}},
	{"Testleri burada çalıştıramadım; hiçbir şey doğrulanmadı.", nil},
	{"Yetkim yok mu diye kontrol ettim: yetkim var, sorun token'daydı.", nil},
	// delegation
	{"API anahtarını gönderebilir misiniz?", []ks{q("gönderebilir misiniz")}},
	{"Lütfen API anahtarını bana gönderin.", []ks{q("gönderin")}},
	{"Sunucuyu yeniden başlatmanız gerekiyor.", []ks{q("başlatmanız gerekiyor")}},
	{"Dağıtım için onayınıza ihtiyacım var.", []ks{q("onayınıza ihtiyacım var")}},
	{"Log dosyalarını gönderin.", nil},
	{"Lütfen diff'i inceleyin.", nil},
	{"```\nTüm testler geçti.\n```", nil},
})

func TestPhrasesTurkish(t *testing.T) { runLang(t, "tr") }
