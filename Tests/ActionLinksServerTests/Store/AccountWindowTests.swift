import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// `accounts:query`'s window (issue 35 item 8): the store reads only the accounts asked for, by ID
/// ascending or descending after an offset, on SQLite and PostgreSQL (``StoreFactory``), and the
/// operation answers as it did when it read every account and cut the window out in memory.
@Suite("Account windows", .timeLimit(.minutes(5)))
struct AccountWindowTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    static func id(_ index: Int) -> String { String(format: "u%02d", index) }

    /// 25 accounts `u00`…`u24` in the default tenant (`u07` with a provider identity), and three in
    /// tenant `t-1` whose IDs fall between them.
    func filled(_ kind: String) async throws -> StoreUnderTest {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch((0..<25).map { .id(Self.id($0)) })
            for index in 0..<25 {
                try tx.insert(
                    Account(
                        localID: Self.id(index), email: "\(Self.id(index))@example.com", createdAt: self.now,
                        federatedIdentities: index == 7 ? [FederatedIdentity(providerID: "yahoo.com", rawID: "y-7")] : []))
            }
        }
        try await store.accounts.transaction(tenantID: "t-1", now: now) { tx in
            try tx.prefetch(["u03a", "u10a", "u30"].map(AccountKey.id))
            for id in ["u03a", "u10a", "u30"] { try tx.insert(Account(localID: id, tenantID: "t-1", createdAt: self.now)) }
        }
        return store
    }

    func window(_ store: StoreUnderTest, tenant: String = "", descending: Bool = false, offset: Int = 0, limit: Int) async throws
        -> [String]
    {
        try await store.accounts.accounts(tenantID: tenant, descending: descending, offset: offset, limit: limit).map(\.localID)
    }

    @Test("by ID ascending and descending, after an offset, at most the limit", arguments: StoreFactory.kinds)
    func orderOffsetLimit(kind: String) async throws {
        let store = try await filled(kind)
        #expect(try await window(store, limit: 5) == (0..<5).map(Self.id))
        #expect(try await window(store, offset: 10, limit: 3) == [10, 11, 12].map(Self.id))
        #expect(try await window(store, descending: true, limit: 4) == [24, 23, 22, 21].map(Self.id))
        #expect(try await window(store, descending: true, offset: 20, limit: 10) == [4, 3, 2, 1, 0].map(Self.id))
        #expect(try await window(store, limit: 500) == (0..<25).map(Self.id))
        let full = try await store.accounts.accounts(tenantID: "", descending: false, offset: 7, limit: 1)
        #expect(full.first?.email == "u07@example.com" && full.first?.federatedIdentities.map(\.rawID) == ["y-7"], "whole accounts")
    }

    @Test("an offset at or beyond the end is an empty window", arguments: StoreFactory.kinds)
    func offsetBeyondTheEnd(kind: String) async throws {
        let store = try await filled(kind)
        #expect(try await window(store, offset: 22, limit: 10) == [22, 23, 24].map(Self.id))
        #expect(try await window(store, offset: 25, limit: 10).isEmpty)
        #expect(try await window(store, descending: true, offset: 1000, limit: 10).isEmpty)
        #expect(try await window(store, offset: Int(Int32.max) + 1, limit: 500).isEmpty)
    }

    @Test("each tenant's window holds only its accounts", arguments: StoreFactory.kinds)
    func tenantsKeptApart(kind: String) async throws {
        let store = try await filled(kind)
        #expect(try await window(store, tenant: "t-1", limit: 10) == ["u03a", "u10a", "u30"])
        #expect(try await window(store, tenant: "t-1", descending: true, offset: 1, limit: 10) == ["u10a", "u03a"])
        #expect(try await window(store, offset: 3, limit: 2) == [3, 4].map(Self.id))
        #expect(try await window(store, descending: true, limit: 1) == [Self.id(24)])
        #expect(try await window(store, tenant: "t-2", limit: 10).isEmpty)
        #expect(try await store.accounts.countAccounts(tenantID: "t-1") == 3)
        #expect(try await store.accounts.countAccounts(tenantID: "") == 25)
    }

    /// `accounts:query` through the API: the defaults (ascending, offset 0, limit 500), the limit
    /// kept within 1…500, a negative offset read as 0, `recordsCount` the tenant's whole count.
    @Test("accounts:query: the window, its bounds and recordsCount, per tenant")
    func queryOperation() async throws {
        try await TestApp.router { app in
            let users = (0..<510).map { ["localId": String(format: "q%03d", $0), "email": String(format: "q%03d@example.com", $0)] }
            for start in stride(from: 0, to: users.count, by: 255) {
                let reply = try await app.api("batchCreate", ["users": Array(users[start..<start + 255])], admin: true)
                #expect(reply.status == 200 && (reply.json["error"] as? [Any])?.isEmpty != false, "\(reply.text)")
            }
            func query(_ fields: [String: Any], tenant: String? = nil) async throws -> (count: String?, ids: [String]) {
                let reply = try await app.api("query", fields, admin: true, tenant: tenant)
                #expect(reply.status == 200, "\(reply.text)")
                let found = (reply.json["userInfo"] as? [[String: Any]] ?? []).compactMap { $0["localId"] as? String }
                return (reply.json["recordsCount"] as? String, found)
            }
            func ids(_ range: some Sequence<Int>) -> [String] { range.map { String(format: "q%03d", $0) } }

            let all = try await query([:])
            #expect(all.count == "510" && all.ids == ids(0..<500), "the default limit is 500, ascending")
            #expect(try await query(["limit": 1000]).ids == ids(0..<500), "at most 500")
            #expect(try await query(["limit": "0"]).ids == ids(0..<1), "at least 1")
            #expect(try await query(["limit": 3, "offset": "-5"]).ids == ids(0..<3), "a negative offset is 0")
            #expect(try await query(["limit": "3", "offset": 507]).ids == ids(507..<510))
            let past = try await query(["offset": 510])
            #expect(past.count == "510" && past.ids.isEmpty)
            #expect(try await query(["order": "DESC", "limit": 3]).ids == ids([509, 508, 507]))
            #expect(try await query(["order": "DESC", "offset": 505]).ids == ids([4, 3, 2, 1, 0]))
            #expect(try await query(["order": "ASC", "sortBy": "USER_ID", "limit": 2, "offset": 1]).ids == ids(1..<3))
            let counted = try await app.api("query", ["returnUserInfo": false, "limit": 1], admin: true)
            #expect(counted.json["recordsCount"] as? String == "510" && counted.json["userInfo"] == nil, "\(counted.text)")

            let tenant = try await app.registerEnabledTenant()
            let created = try await app.api("batchCreate", ["users": [["localId": "q250a"]]], admin: true, tenant: tenant)
            #expect(created.status == 200, "\(created.text)")
            let inTenant = try await query(["offset": 0], tenant: tenant)
            #expect(inTenant.count == "1" && inTenant.ids == ["q250a"])
            #expect(try await query(["offset": 250, "limit": 2]).ids == ids(250..<252), "another tenant's account is not in the window")
        }
    }
}
