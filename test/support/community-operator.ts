// The address the node project's relay treats as its community review operator
// (COMMUNITY_REVIEW_OPERATOR_EMAILS, set by relay-global-setup.ts): a test that signs a
// human in with it acts as the operator through that human's agent.
export const COMMUNITY_OPERATOR_EMAIL = "community-operator@example.com";
