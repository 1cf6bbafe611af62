/**
 * Integration tests talk to real services on a shared 2-core machine: a hook or test gets three
 * minutes unless it says otherwise (`testTimeout` is a global jest option, not a project one).
 */
jest.setTimeout(180_000);
