package finalblock

import "testing"

var _ = register("id", []langCase{
	// work
	{"Sudah selesai.", []ks{d(ScopeWork, "Sudah selesai")}},
	{"Selesai.", []ks{d(ScopeWork, "Selesai")}},
	{"Saya sudah memperbaiki bug di parser.", []ks{d(ScopeWork, "sudah memperbaiki")}},
	{"Login sekarang berfungsi dengan baik.", []ks{d(ScopeWork, "sekarang berfungsi dengan baik")}},
	{"Belum selesai.", nil},
	{"Sudah selesai belum?", nil},
	{"Sudah selesai belum", nil},
	{"Jika sudah selesai, saya kabari.", nil},
	{"Saya belum memperbaiki bug ini.", nil},
	{"Perlu selesai sebelum Jumat.", nil},
	{"Saya tidak yakin sudah memperbaiki akar masalahnya.", nil},
	{"Apakah login sudah berfungsi dengan baik?", nil},
	// tests
	{"Semua tes lulus.", []ks{d(ScopeTests, "Semua tes lulus")}},
	{"Unit test sudah berhasil.", []ks{d(ScopeTests, "Unit test sudah berhasil")}},
	{"Tes tidak lulus.", nil},
	{"Pastikan semua tes lulus.", nil},
	// build
	{"Build berhasil.", []ks{d(ScopeBuild, "Build berhasil")}},
	{"Kompilasi sudah sukses.", []ks{d(ScopeBuild, "Kompilasi sudah sukses")}},
	{"Build belum berhasil.", nil},
	{"Kalau build berhasil, saya akan merge ke main.", nil},
	// deploy
	{"Sudah di-deploy ke production.", []ks{d(ScopeDeploy, "Sudah di-deploy ke production")}},
	{"Versi baru sudah dirilis.", []ks{d(ScopeDeploy, "sudah dirilis")}},
	{"Harus di-deploy ke production dulu.", nil},
	{"Apakah versi baru sudah dirilis?", nil},
	// merge
	{"Sudah di-merge ke main.", []ks{d(ScopeMerge, "Sudah di-merge ke main")}},
	{"Perubahan sudah digabungkan.", []ks{d(ScopeMerge, "sudah digabungkan")}},
	{"Belum di-merge ke main.", nil},
	{"Kalau PR-nya sudah di-merge, saya hapus branch-nya.", nil},
	// blocked
	{"Saya tidak bisa melanjutkan tanpa kunci.", []ks{b("Saya tidak bisa melanjutkan")}},
	{"Saya terblokir oleh firewall.", []ks{b("Saya terblokir")}},
	{"Saya tidak punya akses ke cluster.", []ks{b("Saya tidak punya akses")}},
	{"Saya tidak bisa menjalankan tes di sini; belum ada yang terverifikasi.", nil},
	{"Jika saya tidak bisa melanjutkan, saya akan memberi tahu Anda.", nil},
	{"Kalau saya buntu, saya akan bertanya.", nil},
	{"Jika saya tidak punya akses ke cluster, CI yang akan men-deploy.", nil},
	// delegation
	{"Tolong kirimkan API key.", []ks{q("Tolong kirimkan")}},
	{"Bisakah Anda mengirimkan log?", []ks{q("Bisakah Anda mengirimkan")}},
	{"Kirimkan saya sertifikatnya.", []ks{q("Kirimkan saya")}},
	{"Saya perlu persetujuan Anda.", []ks{q("Saya perlu persetujuan Anda")}},
	{"Anda perlu me-restart server.", []ks{q("Anda perlu")}},
	{"Silakan cek diff-nya.", nil},
	{"Konfigurasi dimuat ulang otomatis tanpa Anda perlu me-restart server.", nil},
	{"Tidak perlu kirimkan saya log-nya lagi.", nil},
	{"Bukan berarti saya perlu bantuan Anda, tapi review tetap berguna.", nil},
	{"```\nSemua tes lulus.\n```", nil},
})

func TestPhrasesIndonesian(t *testing.T) { runLang(t, "id") }
