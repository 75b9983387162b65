import KeepAliveCore
import Testing

/// CoreLocation's request rules, every status and request.
@Suite struct AuthorizationRulesTests {
    typealias Question = AuthorizationRules.Question

    static let prompts: [(AuthorizationRules.Request, LocationAuthorization, Bool, Question?)] = [
        // request, stored status, upgrade prompt already shown, question asked
        (.whenInUse, .notDetermined, false, .whenInUse),
        (.always, .notDetermined, false, .always),
        (.whenInUse, .whenInUse, false, nil),
        (.always, .whenInUse, false, .upgradeToAlways),
        (.always, .whenInUse, true, nil),
        (.whenInUse, .always, true, nil),
        (.always, .always, true, nil),
        (.whenInUse, .denied, false, nil),
        (.always, .denied, false, nil),
        (.whenInUse, .restricted, false, nil),
        (.always, .restricted, false, nil),
    ]

    @Test(arguments: prompts)
    func requestsPromptOnlyWhereCoreLocationDoes(
        request: AuthorizationRules.Request,
        status: LocationAuthorization,
        shown: Bool,
        question: Question?
    ) {
        let record = AuthorizationRecord(application: "app", status: status, alwaysPromptShown: shown)
        #expect(AuthorizationRules.question(for: request, record: record) == question)
    }

    static let answers: [(Question, AuthorizationAnswer, LocationAuthorization, Bool, Bool)] = [
        // question, answer, resulting status, temporary, upgrade prompt used up
        (.whenInUse, .whenInUse, .whenInUse, false, false),
        (.whenInUse, .once, .whenInUse, true, false),
        (.whenInUse, .deny, .denied, false, false),
        (.whenInUse, .always, .denied, false, false),  // not offered: treated as a refusal
        (.always, .always, .always, false, false),
        (.always, .whenInUse, .whenInUse, false, true),
        (.always, .once, .whenInUse, true, false),
        (.always, .deny, .denied, false, false),
        (.upgradeToAlways, .always, .always, false, true),
        (.upgradeToAlways, .whenInUse, .whenInUse, false, true),
        (.upgradeToAlways, .deny, .whenInUse, false, true),  // not offered: keeps when in use
    ]

    @Test(arguments: answers)
    func answersGiveTheseRecords(
        question: Question,
        answer: AuthorizationAnswer,
        status: LocationAuthorization,
        temporary: Bool,
        usedUp: Bool
    ) {
        let before = AuthorizationRecord(
            application: "app",
            status: question == .upgradeToAlways ? .whenInUse : .notDetermined
        )
        let after = AuthorizationRules.apply(answer, to: question, record: before)
        #expect(after.status == status)
        #expect(after.isTemporary == temporary)
        #expect(after.alwaysPromptShown == usedUp)
    }

    @Test func reducedAccuracyRoundsToTheDocumentedGrid() {
        let exact = Location(latitude: 52.367_61, longitude: 4.904_14, altitudeMSL: 2, horizontalAccuracy: 5)
        let reduced = exact.reduced()
        #expect(abs(reduced.latitude - 52.37) < 1e-9 && abs(reduced.longitude - 4.90) < 1e-9)
        #expect(reduced.horizontalAccuracy == 1000 && reduced.altitudeMSL == nil)
    }
}
