import ActionLinks

// Exercises the library so the linker keeps it; the CLI tests run `ldd` on this binary and fail
// if Foundation shows up among its libraries.
let link = ActionCodeLink(mode: .signIn, oobCode: "probe")
let domain = try! LinkDomain("links.example.com")
print(ActionCodeLink.parse(link.mobileLink(on: domain)) == link)
