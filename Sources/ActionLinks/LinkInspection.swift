/// Everything ActionLinks can tell about one link: its layers, the action it carries, how each
/// Firebase SDK reads it, whether its continue URL is allowed, and what looks wrong.
public struct LinkInspection: Sendable {
    /// Why a text is not an action link.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// A stable identifier of the kind of failure.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// The identifier, stable across releases.
            public let rawValue: String
            /// A layer is not a URL the strict splitter accepts.
            public static let notAURL = Code(rawValue: "notAURL")
            /// A known wrapper carries no `link` or `deep_link_id`.
            public static let wrapperWithoutLink = Code(rawValue: "wrapperWithoutLink")
            /// More than ``LinkUnwrapper/maximumDepth`` layers.
            public static let tooDeep = Code(rawValue: "tooDeep")
            /// No `mode` parameter.
            public static let missingMode = Code(rawValue: "missingMode")
            /// A `mode` that is not one of ``ActionCodeLink/Mode``.
            public static let unknownMode = Code(rawValue: "unknownMode")
            /// No `oobCode`, or an empty one.
            public static let missingCode = Code(rawValue: "missingCode")
            /// A parameter whose escapes do not decode to UTF-8.
            public static let undecodableParameter = Code(rawValue: "undecodableParameter")
            /// See ``rawValue``.
            public var description: String { rawValue }
        }

        /// What kind of failure this is.
        public let code: Code
        /// A sentence saying what is wrong.
        public let message: String

        /// See ``message``.
        public var description: String { message }

        static func notAURL(_ error: URLSplitError, layer: Int) -> Failure {
            Failure(code: .notAURL, message: layer == 1 ? "not a URL: \(error.message)" : "layer \(layer) is not a URL: \(error.message)")
        }
    }

    /// The text that was inspected.
    public let input: String
    /// The URLs the link went through, outermost first (the input is the first).
    public let layers: [LinkUnwrapper.Layer]
    /// The action, when the input is an action link.
    public let action: ActionCodeLink?
    /// Why the input is not an action link, when it is not.
    public let failure: Failure?
    /// How each Firebase SDK reads the input.
    public let clients: [ClientVerdict]
    /// The continue-URL policy's decision, when a policy was given and the link has a continue URL.
    public let continueURLDecision: ContinueURLPolicy.Decision?
    /// Things a person should know: SDKs that read the link differently, repeated parameters, and so on.
    public let warnings: [String]

    /// Inspects `input`; with a `policy`, also decides whether its continue URL is allowed.
    public init(_ input: String, policy: ContinueURLPolicy? = nil) {
        self.input = input
        let (layers, unwrapped) = LinkUnwrapper.unwrapRecordingLayers(input)
        self.layers = layers
        var warnings: [String] = []
        var action: ActionCodeLink?
        switch unwrapped.flatMap(ActionParameters.read) {
        case .success(let reading):
            action = reading.link
            failure = nil
            for name in reading.repeated {
                warnings.append("\(name) appears more than once: the last one is used (the Android SDK uses the first)")
            }
        case .failure(let failure):
            self.failure = failure
        }
        self.action = action
        if case .success(let scanned) = unwrapped, action != nil {
            let target = scanned.parts
            if target.path != ActionCodeLink.actionPath[...] {
                warnings.append(
                    "the action link's path is '\(target.path)', not \(ActionCodeLink.actionPath): a link domain's handler will not receive it"
                )
            }
            if target.scheme.lowercased() != "https" {
                warnings.append("the action link uses '\(target.scheme):', not 'https:': universal links and App Links need https")
            }
        }
        if layers.contains(where: { $0.kind == .dynamicLinkWrapper }) {
            warnings.append(
                "Firebase Dynamic Links shut down on 2025-08-25: page.link and app.goo.gl links no longer resolve; issue links on your own link domain"
            )
        }
        clients = ClientVerdict.verdicts(for: input, action: action)
        // When ActionLinks itself refuses the link, an SDK refusing it too is no news.
        for verdict in clients where action != nil || verdict.accepts {
            for problem in verdict.problems { warnings.append("\(verdict.client.displayName) \(problem)") }
        }
        if let policy, let continueURL = action?.continueURL {
            let decision = policy.evaluate(continueURL)
            continueURLDecision = decision
            if case .rejected(let rejection) = decision {
                warnings.append("continueUrl is not allowed: \(rejection.message)")
            }
        } else {
            continueURLDecision = nil
        }
        self.warnings = warnings
    }
}
