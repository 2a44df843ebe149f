export async function demo(): Promise<void> {}
