@testable import KeepAliveDelivery
import Testing

/// A command the broker sends again after a reconnect (QoS 1, at least once) is taken once.
struct RecentMessagesTests {
    private func message(_ id: Int32, _ text: String) -> MosquittoClient.Message {
        MosquittoClient.Message(topic: "owntracks/me/phone/cmd", payload: Array(text.utf8), size: text.utf8.count, retained: false, id: id)
    }

    /// Whether each message was new, in order.
    private func taken(_ messages: [MosquittoClient.Message], recent: inout RecentMessages) -> [Bool] {
        messages.map { recent.isNew($0) }
    }

    @Test func aMessageSentAgainWithItsIdIsNotNewAndOthersAre() {
        var recent = RecentMessages()
        let verdicts = taken(
            [
                message(7, #"{"action": "reportLocation"}"#),
                message(7, #"{"action": "reportLocation"}"#),  // the same id and payload: sent again
                message(8, #"{"action": "reportLocation"}"#),  // the same command sent twice by the user
                message(7, #"{"action": "dump"}"#),  // an id come round again with another command
                message(0, "x"), message(0, "x"),  // QoS 0 has no id: every one is new
            ],
            recent: &recent
        )
        #expect(verdicts == [true, false, true, true, true, true])
    }

    @Test func onlyTheLastHundredAreRemembered() {
        var recent = RecentMessages()
        _ = taken((1...101).map { message(Int32($0), "c") }, recent: &recent)
        #expect(taken([message(1, "c"), message(101, "c")], recent: &recent) == [true, false], "the first fell out; the last is kept")
    }
}
