// Placeholder: the int project's global setup/teardown (owned elsewhere).
export default async function () {}
