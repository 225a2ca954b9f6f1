// The 3D scene both gait pages draw (the replay page and `gait play`'s), z up: sky, lights,
// a floor with a 0.25 m grid, one group per body built from its primitives (pelvis grey, left
// leg blue, right leg red), a ring under each body in contact, the terrain mesh, and an orbit
// camera around a target (drag: orbit, wheel: zoom).
function gaitScene(canvas, shapes) {
  "use strict";
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  renderer.shadowMap.enabled = true;
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xdfe8f0);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.05, 200);
  camera.up.set(0, 0, 1);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x887766, 0.7));
  const sun = new THREE.DirectionalLight(0xffffff, 0.8);
  sun.castShadow = true;
  sun.shadow.mapSize.set(2048, 2048);
  Object.assign(sun.shadow.camera, { left: -3, right: 3, top: 3, bottom: -3, near: 0.1, far: 20 });
  scene.add(sun, sun.target);
  // The floor, 200 m across: one 1 m tile (0.25 m lines, 1 m lines darker) drawn on a canvas
  // and repeated.
  const tile = document.createElement("canvas");
  tile.width = tile.height = 256;
  const t = tile.getContext("2d");
  t.fillStyle = "#d8cfbd"; t.fillRect(0, 0, 256, 256);
  t.strokeStyle = "#b3a890"; t.lineWidth = 2;
  for (const k of [64, 128, 192]) {
    t.beginPath(); t.moveTo(k, 0); t.lineTo(k, 256); t.moveTo(0, k); t.lineTo(256, k); t.stroke();
  }
  t.strokeStyle = "#7d735f"; t.lineWidth = 4; t.strokeRect(0, 0, 256, 256);
  const texture = new THREE.CanvasTexture(tile);
  texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
  texture.repeat.set(200, 200);
  texture.anisotropy = renderer.capabilities.getMaxAnisotropy();
  const floor = new THREE.Mesh(new THREE.PlaneGeometry(200, 200),
    new THREE.MeshLambertMaterial({ map: texture }));
  floor.receiveShadow = true;
  scene.add(floor);

  // One group per body, its primitives in the body frame.
  const n = shapes.length;
  const colourOf = (i) => i === 0 ? 0x5a5a5a : (i <= (n - 1) / 2 ? 0x2860d0 : 0xd04830);
  const bodies = shapes.map((body, i) => {
    const group = new THREE.Group();
    const material = new THREE.MeshStandardMaterial({ color: colourOf(i), roughness: 0.6 });
    for (const p of body.primitives) {
      let mesh;
      if (p.kind === "sphere") {
        mesh = new THREE.Mesh(new THREE.SphereGeometry(p.radius, 20, 14), material);
        mesh.position.set(...p.center);
      } else if (p.kind === "capsule") {
        const a = new THREE.Vector3(...p.a), b = new THREE.Vector3(...p.b);
        const length = a.distanceTo(b);
        mesh = new THREE.Mesh(new THREE.CapsuleGeometry(p.radius, length, 6, 14), material);
        mesh.position.copy(a).add(b).multiplyScalar(0.5);
        if (length > 1e-9) {
          mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), b.clone().sub(a).normalize());
        }
      } else if (p.kind === "cuboid") {
        mesh = new THREE.Mesh(new THREE.BoxGeometry(2 * p.half[0], 2 * p.half[1], 2 * p.half[2]), material);
        const [x, y, z] = p.axes.map((v) => new THREE.Vector3(...v));
        mesh.quaternion.setFromRotationMatrix(new THREE.Matrix4().makeBasis(x, y, z));
        mesh.position.set(...p.center);
      } else {
        continue;
      }
      mesh.castShadow = true;
      group.add(mesh);
    }
    scene.add(group);
    return group;
  });
  const rings = shapes.map(() => {
    const ring = new THREE.Mesh(new THREE.RingGeometry(0.05, 0.08, 24),
      new THREE.MeshBasicMaterial({ color: 0xff8800, side: THREE.DoubleSide }));
    ring.visible = false;
    scene.add(ring);
    return ring;
  });

  // A terrain (`ground`: heights on a grid) as a mesh over the floor.
  let terrain = null, groundNow = null;
  const terrainMaterial = new THREE.MeshLambertMaterial({ color: 0xc9bfa8, side: THREE.DoubleSide });
  function showGround(g) {
    if (terrain) { scene.remove(terrain); terrain.geometry.dispose(); terrain = null; }
    floor.position.z = 0;
    groundNow = null;
    if (!g || g.nx < 2 || g.ny < 2) return;
    groundNow = g;
    // The floor under a terrain that goes below it, as the physics lowers it.
    const lowest = g.heights.reduce((a, b) => Math.min(a, b), 0);
    if (lowest < 0) floor.position.z = lowest - 0.01;
    const position = new Float32Array(g.nx * g.ny * 3), index = [];
    for (let j = 0; j < g.ny; j++) {
      for (let i = 0; i < g.nx; i++) {
        const k = j * g.nx + i;
        position.set([g.origin[0] + i * g.cell, g.origin[1] + j * g.cell, g.heights[k]], 3 * k);
        if (i + 1 < g.nx && j + 1 < g.ny) index.push(k, k + 1, k + g.nx + 1, k, k + g.nx + 1, k + g.nx);
      }
    }
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(position, 3));
    geometry.setIndex(index);
    geometry.computeVertexNormals();
    terrain = new THREE.Mesh(geometry, terrainMaterial);
    terrain.receiveShadow = true;
    scene.add(terrain);
  }
  // The ground's height under (x, y) for the contact rings (0 off the terrain).
  function heightAt(x, y) {
    const g = groundNow;
    if (!g) return 0;
    const i = Math.round((x - g.origin[0]) / g.cell), j = Math.round((y - g.origin[1]) / g.cell);
    if (i < 0 || j < 0 || i >= g.nx || j >= g.ny) return 0;
    return g.heights[j * g.nx + i];
  }

  // Bodies at `poses` (per body x, y, z, qx, qy, qz, qw), rings under those in `contacts`.
  function pose(poses, contacts) {
    poses.forEach((p, i) => {
      if (!bodies[i]) return;
      bodies[i].position.set(p[0], p[1], p[2]);
      bodies[i].quaternion.set(p[3], p[4], p[5], p[6]);
    });
    rings.forEach((ring, i) => {
      ring.visible = contacts.includes(i) && !!poses[i];
      if (ring.visible) ring.position.set(poses[i][0], poses[i][1], heightAt(poses[i][0], poses[i][1]) + 0.006);
    });
  }

  // The orbit camera: around `target`, at `view.azimuth` (rad, from +x), `view.elevation`
  // and `view.distance` (m).
  const target = new THREE.Vector3(0, 0, 0.8);
  const view = { azimuth: -Math.PI / 2, elevation: 0.25, distance: 3.2 };
  let drag = null;
  canvas.onpointerdown = (e) => { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); };
  canvas.onpointerup = () => { drag = null; };
  canvas.onpointermove = (e) => {
    if (!drag) return;
    view.azimuth -= (e.clientX - drag[0]) * 0.01;
    view.elevation = Math.min(1.5, Math.max(-0.1, view.elevation + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
  };
  canvas.onwheel = (e) => { e.preventDefault(); view.distance = Math.min(30, Math.max(0.5, view.distance * Math.exp(e.deltaY * 0.001))); };
  // Looks at (x, y, z) from the orbit, the sun over it.
  function aim(x, y, z) {
    target.set(x, y, z);
    camera.position.set(
      target.x + view.distance * Math.cos(view.elevation) * Math.cos(view.azimuth),
      target.y + view.distance * Math.cos(view.elevation) * Math.sin(view.azimuth),
      target.z + view.distance * Math.sin(view.elevation));
    camera.lookAt(target);
    sun.position.set(target.x + 2, target.y - 3, 5); sun.target.position.copy(target);
  }
  // The heading (rad) of a pose's quaternion.
  function yawOf(p) {
    return Math.atan2(2 * (p[6] * p[5] + p[3] * p[4]), 1 - 2 * (p[4] * p[4] + p[5] * p[5]));
  }
  function resize() {
    const w = canvas.clientWidth, h = canvas.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(1, h); camera.updateProjectionMatrix();
  }
  function render() { renderer.render(scene, camera); }
  return { THREE, scene, camera, renderer, view, target, showGround, pose, aim, yawOf, resize, render };
}
