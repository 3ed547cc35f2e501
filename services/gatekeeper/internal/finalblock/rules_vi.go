package finalblock

// vietnamese is the reviewed Vietnamese table.
var vietnamese = langSpec{
	tag: "vi",
	rules: []rule{
		// work
		done(ScopeWork, "(đã|đều) (xong|hoàn thành|hoàn tất)"),
		done(ScopeWork, "(xong|hoàn tất)").fin(),
		done(ScopeWork, "(xong|ổn) rồi"),
		done(ScopeWork, "đã (sửa|fix|khắc phục|giải quyết|xử lý)"),
		done(ScopeWork, "(chạy|hoạt động) (bình thường|tốt|ổn|đúng) (rồi|)"),
		// tests
		done(ScopeTests, "(tất cả |toàn bộ |các |)(test|tests|bài test|unit test|kiểm thử|bài kiểm thử) (đều |)(đã |)"+
			"(pass|qua|vượt qua|thành công|chạy thành công|xanh)"),
		// build
		done(ScopeBuild, "(build|biên dịch) (đã |)(thành công|pass|xanh)"),
		// deploy
		done(ScopeDeploy, "(đã |)(deploy|triển khai|phát hành) (lên|ra|tới|đến) (production|prod|staging|môi trường production)"),
		done(ScopeDeploy, "đã (deploy|phát hành)"),
		// merge
		done(ScopeMerge, "(đã |)(merge|gộp|push|đẩy) (vào|lên) (main|master|nhánh main|nhánh chính)"),
		done(ScopeMerge, "đã (merge|gộp|push)"),
		// blocked
		blocked("(tôi|mình|chúng tôi) (không thể|không) tiếp tục"),
		blocked("(tôi|mình|chúng tôi) (đang |)(bị chặn|bị kẹt|bị block)"),
		blocked("(tôi|mình|chúng tôi) không có (quyền truy cập|quyền|thông tin đăng nhập)"),
		// delegation
		request("(vui lòng|làm ơn|xin hãy|bạn hãy) (gửi|cung cấp|chia sẻ|chạy|thêm|tạo|cấp|cài đặt|khởi động lại|cấu hình)"),
		request("(bạn có thể|anh có thể|chị có thể|bạn vui lòng) (gửi|cung cấp|chia sẻ|chạy|thêm|tạo|cấp)"),
		request("gửi cho (tôi|mình|chúng tôi)"),
		request("(tôi|mình|chúng tôi) cần bạn"),
		request("bạn (cần|sẽ cần|phải)"),
	},
	negators:      "không chưa chẳng chả đâu gần",
	askAfter:      "chưa không",
	hypotheticals: "nếu khi sau trước lúc sẽ cần phải hãy để mong liệu",
	conjunctions:  "và nhưng vì nên tuy",
	linking:       "đã đều giờ",
}
