import ArgumentParser

/// The `actionlinks` command: the link domain's server and the tools that explain links.
@main
struct ActionLinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "actionlinks",
        abstract: "A self-hostable link domain for email action links (sign-in, password reset, email verification).",
        discussion: """
            Exit status: 0 on success; 1 when a policy input is rejected or the configuration is bad; \
            64 for usage errors.
            """,
        version: Version.text,
        subcommands: [
            Serve.self, Generate.self, Inspect.self, Policy.self, AASA.self, AssetLinksCommand.self, Check.self, Config.self,
            ServiceAccount.self,
            Keys.self,
            Users.self,
        ]
    )
}
