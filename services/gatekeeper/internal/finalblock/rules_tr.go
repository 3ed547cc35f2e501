package finalblock

// turkish is the reviewed Turkish table. Turkish negates and asks with
// suffixes and particles after the verb (bitmedi, bitti mi), so its rows
// are whole inflected words; after a phrase, a question particle or a
// conditional or temporal form of "to be" ("build başarılı olursa": if the
// build succeeds) makes it no statement (askAfter).
var turkish = langSpec{
	tag: "tr",
	rules: []rule{
		// work
		done(ScopeWork, "(tamamlandı|bitti|halledildi|çözüldü|düzeltildi|giderildi|uygulandı)"),
		done(ScopeWork, "hazır").fin(),
		done(ScopeWork, "(düzelttim|tamamladım|bitirdim|çözdüm|hallettim|uyguladım|düzelttik|tamamladık|bitirdik|çözdük)"),
		done(ScopeWork, "(artık|şimdi|düzgün|sorunsuz|doğru) çalışıyor"),
		// tests
		done(ScopeTests, "(tüm testler|bütün testler|testler|testlerin hepsi|tüm test|test) (başarıyla |)(geçti|geçiyor|başarılı|yeşil)"),
		// build
		done(ScopeBuild, "(build|derleme) (başarıyla |)(başarılı|tamamlandı|geçti|geçiyor|yeşil)"),
		done(ScopeBuild, "(hatasız|sorunsuz|başarıyla) (derleniyor|derlendi)"),
		done(ScopeBuild, "(proje|kod) derleniyor").fin(),
		// deploy
		done(ScopeDeploy, "(production'a|prod'a|canlıya|staging'e|canlı ortama|production ortamına) "+
			"(deploy edildi|deploy ettim|deploy ettik|dağıtıldı|yayınlandı|alındı|aldım)"),
		done(ScopeDeploy, "(deploy edildi|deploy ettim|deploy ettik|dağıttım|yayına aldım|canlıya aldım|canlıya alındı)"),
		// merge
		done(ScopeMerge, "(main'e|master'a|ana dala) (merge edildi|merge ettim|merge ettik|birleştirildi|birleştirdim|push edildi|"+
			"push ettim|pushladım)"),
		done(ScopeMerge, "(merge edildi|merge ettim|merge ettik|birleştirildi|birleştirdim|push ettim|pushladım)"),
		// blocked
		blocked("(devam edemiyorum|devam edemiyoruz|ilerleyemiyorum|ilerleyemiyoruz|devam edemedim)"),
		blocked("(engellendim|takıldım|takılı kaldım|bloke oldum)"),
		blocked("(erişimim|yetkim|iznim|erişim iznim|erişim yetkim) yok"),
		// delegation
		request("(gönderir misiniz|gönderebilir misiniz|paylaşır mısınız|paylaşabilir misiniz|sağlar mısınız|sağlayabilir misiniz|" +
			"çalıştırır mısınız|çalıştırabilir misiniz|ekler misiniz|ekleyebilir misiniz|verir misiniz|verebilir misiniz|iletir misiniz)"),
		request("(gönderin|paylaşın|sağlayın|çalıştırın|ekleyin|verin|iletin|yükleyin|oluşturun)").needing("lütfen"),
		request("(*manız|*meniz) (gerekiyor|gerekecek|lazım)"),
		request("(onayınıza|yardımınıza|izninize|desteğinize) ihtiyacım var"),
	},
	negators:      "değil yok hiç hiçbir asla neredeyse kısmen",
	negAfter:      "değil",
	askAfter:      "mı mi mu mü mıydı miydi olursa ise olunca olduğunda değilse",
	hypotheticals: "eğer şayet olacak olacaktır umarım",
	conjunctions:  "ve ama fakat çünkü ancak ayrıca",
	linking:       "artık şimdi hepsi tüm zaten başarıyla",
}
