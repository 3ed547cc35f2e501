package finalblock

// indonesian is the reviewed Indonesian table.
var indonesian = langSpec{
	tag: "id",
	rules: []rule{
		// work
		done(ScopeWork, "(sudah|telah) (selesai|beres|rampung|diperbaiki|diimplementasikan|diselesaikan|teratasi|diatasi)"),
		done(ScopeWork, "(selesai|beres)").fin(),
		done(ScopeWork, "(sudah|telah|berhasil) (memperbaiki|menyelesaikan|mengimplementasikan)"),
		done(ScopeWork, "(sudah|sekarang) (berfungsi|bekerja|jalan) (dengan baik|normal|lagi|)"),
		// tests
		done(ScopeTests, "(semua |seluruh |)(tes|test|pengujian|unit test) (sudah |telah |)(lulus|berhasil|pass|lolos|hijau)"),
		// build
		done(ScopeBuild, "(build|kompilasi) (sudah |telah |)(berhasil|sukses|lulus|pass|hijau)"),
		// deploy
		done(ScopeDeploy, "(sudah |telah |berhasil |)(di-deploy|dideploy|deploy|dirilis|diterbitkan) (ke|di) "+
			"(production|produksi|prod|staging)"),
		done(ScopeDeploy, "(sudah|telah) (di-deploy|dideploy|dirilis|saya deploy)"),
		// merge
		done(ScopeMerge, "(sudah |telah |)(di-merge|dimerge|digabungkan|di-push|dipush) (ke|di) (main|master|branch main|branch utama)"),
		done(ScopeMerge, "(sudah|telah) (di-merge|dimerge|digabungkan|di-push|dipush)"),
		// blocked
		blocked("(saya|kami|aku) (tidak bisa|tidak dapat|tak bisa|belum bisa) (melanjutkan|lanjut|meneruskan)"),
		blocked("(saya|kami|aku) (terblokir|terhambat|tertahan|buntu)"),
		blocked("(saya|kami|aku) (tidak punya|tidak memiliki|tak punya) (akses|izin|kredensial|hak akses)"),
		// delegation
		request("(tolong|mohon|silakan) (kirim|kirimkan|berikan|bagikan|jalankan|tambahkan|buat|buatkan|instal|konfigurasi|atur)"),
		request("(bisakah anda|bisakah kamu|bisa tolong|dapatkah anda|apakah anda bisa) (mengirim|mengirimkan|memberikan|membagikan|" +
			"menjalankan|menambahkan|membuat)"),
		request("(kirimkan|berikan) (kepada saya|ke saya|saya)"),
		request("saya (perlu|butuh) (anda|kamu|bantuan anda|persetujuan anda)"),
		request("(anda|kamu) (perlu|harus|akan perlu)"),
	},
	negators:      "tidak belum bukan tak tanpa hampir sebagian jangan",
	askAfter:      "belum tidak",
	hypotheticals: "jika kalau apabila bila setelah sebelum sampai hingga akan perlu harus pastikan coba semoga agar supaya untuk apakah",
	conjunctions:  "dan tetapi tapi jadi karena sehingga namun serta",
	linking:       "sudah telah sekarang semua",
}
