package finalblock

import "testing"

var _ = register("vi", []langCase{
	// work
	{"Đã xong.", []ks{d(ScopeWork, "Đã xong")}},
	{"Xong rồi!", []ks{d(ScopeWork, "Xong rồi")}},
	{"Tôi đã sửa lỗi trong parser.", []ks{d(ScopeWork, "đã sửa")}},
	{"Đăng nhập hoạt động bình thường rồi.", []ks{d(ScopeWork, "hoạt động bình thường rồi")}},
	{"Làm xong.", []ks{d(ScopeWork, "xong")}},
	{"Chưa xong.", nil},
	{"Đã xong chưa?", nil},
	{"Xong chưa", nil},
	{"Khi xong tôi sẽ báo.", nil},
	{"Tôi chưa sửa lỗi này.", nil},
	{"Cần hoàn thành trước thứ Sáu.", nil},
	{"Xong rồi chưa?", nil},
	{"Nếu đã sửa ở nhánh khác thì tôi sẽ bỏ commit này.", nil},
	{"Đăng nhập không hoạt động bình thường.", nil},
	// tests
	{"Tất cả test đều đã pass.", []ks{d(ScopeTests, "Tất cả test đều đã pass")}},
	{"Các bài kiểm thử đã vượt qua.", []ks{d(ScopeTests, "Các bài kiểm thử đã vượt qua")}},
	{"Test chưa pass.", nil},
	{"Hãy đảm bảo tất cả test đều pass.", nil},
	{"Nếu test pass thì merge.", nil},
	// build
	{"Build thành công.", []ks{d(ScopeBuild, "Build thành công")}},
	{"Biên dịch đã thành công.", []ks{d(ScopeBuild, "Biên dịch đã thành công")}},
	{"Build không thành công.", nil},
	{"Nếu build thành công thì tôi sẽ tạo PR.", nil},
	// deploy
	{"Đã deploy lên production.", []ks{d(ScopeDeploy, "Đã deploy lên production")}},
	{"Tôi đã phát hành phiên bản mới.", []ks{d(ScopeDeploy, "đã phát hành")}},
	{"Cần deploy lên production sau khi review.", nil},
	{"Nếu đã deploy lên staging thì log sẽ có phiên bản mới.", nil},
	// merge
	{"Đã merge vào main.", []ks{d(ScopeMerge, "Đã merge vào main")}},
	{"Tôi đã push.", []ks{d(ScopeMerge, "đã push")}},
	{"Chưa merge vào main.", nil},
	{"Nếu đã merge thì tôi sẽ xóa nhánh.", nil},
	// blocked
	{"Tôi không thể tiếp tục nếu thiếu khóa.", []ks{b("Tôi không thể tiếp tục")}},
	{"Tôi đang bị chặn bởi tường lửa.", []ks{b("Tôi đang bị chặn")}},
	{"Tôi không có quyền truy cập cluster.", []ks{b("Tôi không có quyền truy cập")}},
	{"Tôi không chạy được test ở đây; chưa có gì được xác minh.", nil},
	{"Nếu tôi bị kẹt, tôi sẽ báo lại cho bạn.", nil},
	{"Nếu tôi không thể tiếp tục, tôi sẽ báo bạn.", nil},
	{"Nếu tôi không có quyền truy cập cluster, CI sẽ deploy.", nil},
	// delegation
	{"Vui lòng gửi API key.", []ks{q("Vui lòng gửi")}},
	{"Bạn có thể gửi log không?", []ks{q("Bạn có thể gửi")}},
	{"Gửi cho tôi chứng chỉ.", []ks{q("Gửi cho tôi")}},
	{"Tôi cần bạn phê duyệt.", []ks{q("Tôi cần bạn")}},
	{"Bạn cần khởi động lại server.", []ks{q("Bạn cần")}},
	{"Vui lòng xem diff.", nil},
	{"Không cần gửi cho tôi log nữa.", nil},
	{"Không cần bạn phải làm gì thêm.", nil},
	{"Không phải tôi cần bạn làm gì thêm, chỉ là gợi ý.", nil},
	{"```\nTất cả test đều đã pass.\n```", nil},
})

func TestPhrasesVietnamese(t *testing.T) { runLang(t, "vi") }
