import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import NIOCore

// The action pages' use of their cache (``PageCache``): outcome pages and compiled forms.

extension ActionPages {
    /// The body of an outcome page, rendered once per outcome and language.
    func outcomeBody(_ outcome: Outcome, _ language: String) -> ByteBuffer {
        let render = {
            resultPage(
                status: .ok, language: language, title: "error.\(outcome.rawValue).title", body: "error.\(outcome.rawValue).body",
                values: ["appName": settings.project.appName]
            ).body ?? ByteBuffer()
        }
        guard templates.strings[language] != nil else { return render() }
        return cache.outcome(PageCache.OutcomeKey(outcome: outcome, language: language), render: render)
    }

    /// A first-shown form's body from its compiled program, or `nil` when the form does not compile.
    func cachedForm(
        mode: ActionCodeLink.Mode, language: String, remembered: Bool, passwords: PasswordSettings? = nil, values: FormValues
    ) -> ByteBuffer? {
        guard templates.strings[language] != nil else { return nil }
        let key = PageCache.FormKey(
            mode: mode, language: language, remembered: remembered, newEmail: values.shownNewEmail != nil, passwords: passwords,
            signInCode: values.signInCode != nil)
        return cache.form(key) { compileForm(key) }?.render(values)
    }

    /// The form of `key` rendered with markers for its values and split at them; `nil` unless the
    /// template's compiled form renders it (values escaped byte by byte) and the program gives what
    /// ``formView(mode:values:language:state:)`` renders for two sets of probe values (empty, and
    /// each slot its own text with every character HTML escapes, a newline and a placeholder).
    func compileForm(_ key: PageCache.FormKey) -> FormProgram? {
        let state = FormState(remembered: key.remembered)
        let view = formView(
            mode: key.mode, values: .marked(newEmail: key.newEmail, signInCode: key.signInCode), language: key.language, state: state,
            passwords: key.passwords)
        guard templates.action.compiles(view),
            let pieces: [CompiledPage<ActionFormView>.Piece] = PageMarker.split(
                String(buffer: templates.render(view)), slots: FormValues.count)
        else { return nil }
        let program = FormProgram(
            pieces: pieces, staticBytes: pieces.reduce(0) { if case .bytes(let bytes) = $1 { $0 + bytes.count } else { $0 } })
        for probe in [{ (_: Int) in "" }, { (slot: Int) in "<\(slot)&\"'>\n{{appName}}" }] {
            let values = FormValues.probe(newEmail: key.newEmail, signInCode: key.signInCode, probe)
            let expected = templates.render(
                formView(mode: key.mode, values: values, language: key.language, state: state, passwords: key.passwords))
            guard program.render(values) == expected else { return nil }
        }
        return program
    }
}
