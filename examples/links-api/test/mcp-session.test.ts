import { expect, it } from 'vitest'
import { mcpSessions } from '../src/mcp/mcp-session.js'

const alice = { sub: 'alice', client_id: 'agent' }
const bob = { sub: 'bob', client_id: 'agent' }

it('a session id belongs to the user and client it was started for, checked or remembered', () => {
  const sessions = mcpSessions('a session secret of 32 bytes or more')
  const id = sessions.start(alice)
  // The first check computes the MAC, the second finds it remembered: both for alice's client only.
  expect(sessions.belongsTo(id, alice)).toBe(true)
  expect(sessions.belongsTo(id, alice)).toBe(true)
  expect(sessions.belongsTo(id, bob)).toBe(false)
  expect(sessions.belongsTo(id, { ...alice, client_id: 'another agent' })).toBe(false)
  // Another instance with the same secret recognises it; one with another secret does not.
  expect(mcpSessions('a session secret of 32 bytes or more').belongsTo(id, alice)).toBe(true)
  expect(mcpSessions('another secret of 32 bytes or more!').belongsTo(id, alice)).toBe(false)
})

it('a tampered or made-up id is not a session, even after the real one was remembered', () => {
  const sessions = mcpSessions('a session secret of 32 bytes or more')
  const id = sessions.start(alice)
  expect(sessions.belongsTo(id, alice)).toBe(true)
  const [nonce, mac] = id.split('.') as [string, string]
  const flipped = `${nonce}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`
  expect(sessions.belongsTo(flipped, alice)).toBe(false)
  expect(sessions.belongsTo(`${'x'.repeat(24)}.${mac}`, alice)).toBe(false)
  expect(sessions.belongsTo('made-up', alice)).toBe(false)
  expect(sessions.belongsTo(`${id}\nbob`, alice)).toBe(false)
})
