import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The one reading of form and query text (``FormFields``) and its rule for repeated names, in the
/// federated handler's query and form body and in a `requestUri`.
@Suite("Form fields", .timeLimit(.minutes(5)))
struct FormFieldsTests {
    @Test func decodesNamesAndValues() {
        #expect(FormFields.decode("") == [:])
        #expect(FormFields.decode("a=1&&b=x+y%2Bz&c&d=&=e") == ["a": "1", "b": "x y+z", "c": "", "d": "", "": "e"])
        #expect(FormFields.decode("name%5B0%5D=%C3%A9t%C3%A9&a[b]=c") == ["name[0]": "été", "a[b]": "c"])
        #expect(FormFields.decode("state=a=b") == ["state": "a=b"])
    }

    @Test func aRepeatedNameRefusesTheWholeText() {
        #expect(FormFields.decode("state=a&state=b") == nil)
        #expect(FormFields.decode("state=a&state=a") == nil)
        #expect(FormFields.decode("SAMLResponse=x&RelayState=r&RelayState=s") == nil)
        #expect(FormFields.decode("code=1&state=s&code") == nil)
        // The same name once encoded and once not is still the same name.
        #expect(FormFields.decode("state=a&st%61te=b") == nil)
        #expect(FormFields.decode("a+b=1&a%20b=2") == nil)
    }

    @Test func aMalformedEscapeRefusesTheWholeText() {
        #expect(FormFields.decode("state=a&code=%zz") == nil)
        #expect(FormFields.decode("state=%") == nil)
        #expect(FormFields.decode("%FF=1") == nil)
    }

    /// A `requestUri`'s query, `postBody` and fragment are each read by the rule; across them a
    /// later value replaces an earlier one, as Firebase's emulator merges them.
    @Test func requestURIParts() {
        let parameters = FederatedSignInService.parameters
        #expect(
            parameters("https://app.example/cb?state=q&code=1#state=f", "code=2&x=y") == ["state": "f", "code": "2", "x": "y"])
        #expect(parameters("https://app.example/cb?state=a&state=b", nil) == nil)
        #expect(parameters("https://app.example/cb?state=a", "SAMLResponse=x&SAMLResponse=y") == nil)
        #expect(parameters("https://app.example/cb#RelayState=a&RelayState=b", nil) == nil)
        #expect(parameters("/cb?state=a", nil) == nil)
    }
}
