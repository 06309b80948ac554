import Testing

@testable import ActionLinksConfiguration

@Suite("Tenants with their own settings", .timeLimit(.minutes(5)))
struct TenantSettingsTests: ServiceSettingsSuite {
    let yaml = """
        users:
          selfServiceDelete: false
        passwords:
          minimumLength: 10
        tenants:
          - plain
          - id: partners
            displayName: Partners
            selfServiceSignUp: false
            emailEnumerationProtection: false
            passwords: {minimumLength: 12}
          - id: staff
            selfServiceDelete: true
            passwords:
              maximumLength: 64

        """

    @Test("IDs and mappings mix; settings left out are the project's")
    func inheritance() throws {
        let settings = try parse(yaml)
        #expect(settings.tenants == ["plain", "partners", "staff"])
        #expect(settings.tenantSettings["plain"] == TenantSettings(id: "plain"))
        #expect(settings.tenantSettings["partners"]?.displayName == "Partners")

        let project = try #require(settings.accountSettings(forTenant: ""))
        #expect(project.tenantID == "" && project.displayName == nil && project.passwords.minimumLength == 10)
        #expect(project.users == UserSettings(selfServiceDelete: false))

        let plain = try #require(settings.accountSettings(forTenant: "plain"))
        #expect(plain.users == project.users && plain.passwords == project.passwords)

        let partners = try #require(settings.accountSettings(forTenant: "partners"))
        #expect(partners.displayName == "Partners")
        #expect(
            partners.users
                == UserSettings(
                    selfServiceSignUp: false, selfServiceDelete: false, emailEnumerationProtection: false, oneAccountPerEmail: true))
        #expect(partners.passwords == PasswordSettings(minimumLength: 12, maximumLength: 4096))

        let staff = try #require(settings.accountSettings(forTenant: "staff"))
        #expect(staff.users.selfServiceDelete && staff.users.selfServiceSignUp)
        #expect(staff.passwords == PasswordSettings(minimumLength: 10, maximumLength: 64))

        #expect(settings.accountSettings(forTenant: "unknown") == nil)
    }

    @Test("a tenant's keys take index-path variables")
    func environment() throws {
        let settings = try parse(
            yaml,
            environment: [
                "ACTIONLINKS_TENANTS_1_SELF_SERVICE_SIGN_UP": "true", "ACTIONLINKS_TENANTS_2_PASSWORDS_MINIMUM_LENGTH": "20",
                "ACTIONLINKS_TENANTS_2_DISPLAY_NAME": "Staff",
            ])
        #expect(settings.accountSettings(forTenant: "partners")?.users.selfServiceSignUp == true)
        #expect(settings.accountSettings(forTenant: "staff")?.passwords == PasswordSettings(minimumLength: 20, maximumLength: 64))
        #expect(settings.tenantSettings["staff"]?.displayName == "Staff")
    }

    @Test("setting tenants adds inheriting tenants and drops missing ones")
    func settingIDs() throws {
        var settings = try parse(yaml)
        settings.tenants = ["partners", "new"]
        #expect(settings.tenantSettings["partners"]?.displayName == "Partners")
        #expect(settings.tenantSettings["new"] == TenantSettings(id: "new") && settings.tenantSettings["staff"] == nil)
    }

    @Test(
        "bad entries name their key and line",
        arguments: [
            ("tenants:\n  - {displayName: X}\n", "tenants[0]", 2, "id is required"),
            ("tenants:\n  - {id: \"bad id\"}\n", "tenants[0].id", 2, "expected a tenant ID of 1 to 64 letters"),
            ("tenants:\n  - a\n  - {id: a}\n", "tenants[1]", 3, "tenant 'a' is listed twice"),
            ("tenants:\n  - id: a\n    selfServiceSignUp: no way\n", "tenants[0].selfServiceSignUp", 3, "expected true or false"),
            ("tenants:\n  - id: a\n    displayName: \"\"\n", "tenants[0].displayName", 3, "expected a non-empty string"),
            ("tenants:\n  - id: a\n    passwords: {minimumLength: 4}\n", "tenants[0].passwords.minimumLength", 3, "from 6 to 128; got '4'"),
            (
                "tenants:\n  - id: a\n    passwords: {minimumLength: 12, maximumLength: 10}\n", "tenants[0].passwords.maximumLength", 3,
                "from 12 to 4096; got '10'"
            ),
            (
                "passwords: {minimumLength: 8, maximumLength: 10}\ntenants:\n  - id: a\n    passwords: {minimumLength: 12}\n",
                "tenants[0].passwords.minimumLength", 4, "expected at most maximumLength (10); got '12'"
            ),
            ("tenants:\n  - id: a\n    oneAccountPerEmail: false\n", "tenants[0].oneAccountPerEmail", 3, "unknown key"),
            ("tenants:\n  - [a]\n", "tenants[0]", 2, "expected a mapping of id, displayName"),
        ] as [(String, String, Int, String)])
    func bad(yaml: String, key: String, line: Int, message: String) throws {
        let problem = try #require(error(yaml))
        #expect(problem.key == key && problem.line == line, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
    }
}
