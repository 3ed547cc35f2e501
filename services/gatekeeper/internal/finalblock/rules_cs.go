package finalblock

// czech is the reviewed Czech table.
var czech = langSpec{
	tag: "cs",
	rules: []rule{
		// work
		done(ScopeWork, "(je|jsou|bylo|byla|byl|byly|vše je) (už |teď |nyní |kompletně |)(hotovo|hotové|hotový|hotová|dokončeno|dokončené|"+
			"dokončený|dokončená|opraveno|opravené|opravený|opravená|vyřešeno|vyřešené|vyřešený|vyřešená|implementováno|implementované|implementovaný|implementovaná)").
			nb("pomocí přes jako v"),
		done(ScopeWork, "(hotovo|dokončeno|opraveno|vyřešeno)").pred(),
		done(ScopeWork, "(opravil|opravila|opravili|dokončil|dokončila|implementoval|implementovala|vyřešil|vyřešila) (jsem|jsme)"),
		done(ScopeWork, "(jsem|jsme) (opravil|opravila|opravili|dokončil|dokončila|vyřešil|vyřešila|implementoval|implementovala)"),
		done(ScopeWork, "funguje (teď|nyní|správně|znovu|zase|jak má|podle očekávání)"),
		done(ScopeWork, "(teď|už|vše|všechno|to) funguje").fin(),
		// tests
		done(ScopeTests, "(všechny |)testy (už |teď |nyní |)(prošly|procházejí|jsou zelené|proběhly úspěšně|jsou v pořádku)"),
		// build
		done(ScopeBuild, "(build|sestavení|kompilace|překlad) (už |teď |)(prošel|prošlo|prošla|proběhl úspěšně|proběhlo úspěšně|"+
			"proběhla úspěšně|je zelený|je zelené|funguje)"),
		done(ScopeBuild, "(kód|projekt|to|vše) se (kompiluje|sestaví)").fin(),
		done(ScopeBuild, "(kompiluje|sestaví) (se |)(bez chyb|bez varování|úspěšně)"),
		// deploy
		done(ScopeDeploy, "(nasazeno|nasazené|nasazen|nasazena|vydáno|publikováno) (do|na) (produkce|produkci|prod|staging|stagingu)"),
		done(ScopeDeploy, "(nasadil|nasadila|nasadili) (jsem|jsme)"),
		done(ScopeDeploy, "(je|jsou) (už |teď |)(nasazeno|nasazené|nasazen|nasazena|v produkci|na produkci)").fin(),
		// merge
		done(ScopeMerge, "(mergnuto|sloučeno|pushnuto|začleněno) (do|na) (main|master|mainu|masteru|hlavní větve)"),
		done(ScopeMerge, "(mergnul|mergnula|sloučil|sloučila|pushnul|pushnula) (jsem|jsme)"),
		done(ScopeMerge, "(pr|pull request|větev|merge request) (byl|byla|je) (mergnut|mergnutý|mergnuta|sloučen|sloučena|začleněn|"+
			"začleněna)"),
		// blocked
		blocked("(nemohu|nemůžu|nemůžeme|nemohl jsem|nemohla jsem) (pokračovat|dál pokračovat|postoupit)"),
		blocked("(jsem|jsme) (zablokovaný|zablokovaná|zablokovaní|zaseknutý|zaseknutá|zaseknutí)"),
		blocked("(zasekl|zasekla|zasekli) (jsem|jsme) se"),
		blocked("(nemám|nemáme) (přístup|oprávnění|přístupová práva|přihlašovací údaje)"),
		// delegation
		request("prosím (pošlete|pošli|zašlete|zašli|poskytněte|poskytni|spusťte|spusť|přidejte|přidej|nasdílejte|vytvořte|restartujte|" +
			"nainstalujte|nastavte|udělte)"),
		// Not "můžete mi dát vědět" (could you let me know).
		request("(můžete|mohl byste|mohla byste|mohli byste|můžeš|mohl bys|mohla bys) (mi |nám |prosím |)(poslat|zaslat|poskytnout|" +
			"spustit|přidat|nasdílet|vytvořit|restartovat|nainstalovat|nastavit|udělit|dát)").nb("vědět"),
		// Not "dejte mi vědět" (let me know).
		request("(pošlete|pošli|zašlete|zašli|dejte|dej) (mi|nám)").nb("vědět"),
		request("potřebuji (vaši pomoc|tvoji pomoc|váš souhlas|tvůj souhlas|vaše schválení|vaše potvrzení)"),
		request("(budete muset|budeš muset|musíte|musíš)"),
	},
	negators:          "ne nikdy bez žádný žádná žádné ani skoro téměř částečně nic",
	hypotheticals:     "pokud jestli jestliže když až kdyby než dokud bude budou musí by ověřte zkontrolujte doufám",
	hypotheticalPairs: "po tom|před tím",
	imperatives:       "ověřte zkontrolujte spusťte",
	leadIns:           "pak teď nejdřív",
	conjunctions:      "a ale tak protože jelikož však zatímco",
	linking:           "je jsou bylo byl byla byly už teď nyní vše všechno",
	complementizers:   "že zda",
}
