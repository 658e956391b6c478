// example.ts -- pathd-client in one page: upload a map, ask for a path,
// then follow a moving agent with a D* Lite session over a WebSocket.
//
//   npm run build && node dist/example.js http://127.0.0.1:8080
import { ApiError, Client } from './index';

async function main(baseUrl: string): Promise<void> {
    const pathd = new Client({ baseUrl, timeoutMs: 5000 }); // 503s are retried after Retry-After

    const map = await pathd.putMap('example', {
        rows: ['..#..', '..#..', '.....'],
        doors: { gate: { cells: [[2, 2]] } },
    });
    console.log(`map ${map.id} version ${map.version}: ${map.width}x${map.height}, ${map.doors} door(s)`);

    const p = await pathd.findPath('example', { start: [0, 0], goal: [4, 0] });
    console.log(`path found=${p.found} cost=${p.cost?.toFixed(3)} steps=${p.path.length} algorithm=${p.algorithm}`);

    try {
        await pathd.findPath('example', { start: [0, 0], goal: [40, 0] });
    } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        console.log(`typed error: ${e.status} ${e.code} (field ${e.field})`);
    }

    // A session follows one agent; the stream sends its moves and the doors
    // it sees, and answers the repaired path each time.
    const s = await pathd.createSession('example', { start: [0, 0], goal: [4, 0], ttl_s: 60 });
    const stream = await pathd.openStream('example', s.session_id);
    const moved = await stream.send({ position: [1, 1] });
    console.log(`after the move: cost=${moved.cost?.toFixed(3)} from (${moved.position.join(',')})`);
    const shut = await stream.send({ doors: [{ id: 'gate', open: false }] });
    console.log(`gate shut: found=${shut.found} reason=${shut.reason}`);
    await stream.close();

    await pathd.deleteSession('example', s.session_id);
    await pathd.deleteMap('example');

    // A waypoint graph: ids as strings or integers, a point snapped to the
    // nearest node, a PATCH that closes an edge as the next version.
    await pathd.putGraph('rooms', {
        kind: 'graph',
        nodes: [{ id: 'hall', position: [0, 0] }, { id: 'door', position: [10, 0] }, { id: 3, position: [10, 10] }],
        edges: [{ from: 'hall', to: 'door', id: 'hall-door' }, { from: 'door', to: 3, cost: 25 }, { from: 'hall', to: 3, cost: 50 }],
    });
    const g = await pathd.findGraphPath('rooms', { start: { point: [1, 1] }, goal: 3 });
    console.log(`graph path ${g.path.join(' > ')} cost=${g.cost} (start snapped to ${g.start.node})`);
    await pathd.patchGraph('rooms', { edges: [{ id: 'hall-door', enabled: false }] });
    const around = await pathd.findGraphPath('rooms', { start: 'hall', goal: 3 });
    console.log(`hall-door closed: ${around.path.join(' > ')} cost=${around.cost}`);
    await pathd.deleteMap('rooms');
}

main(process.argv[2] ?? 'http://127.0.0.1:8080').catch((e) => {
    console.error(e);
    process.exit(1);
});
