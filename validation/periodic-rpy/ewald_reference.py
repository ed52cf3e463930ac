#!/usr/bin/env python3
"""Independent numerical checks for periodic RPY mobility (Ewald sums).

Conventions: eta = viscosity, a = bead radius, box lengths Lx,Ly,Lz (orthorhombic),
V = Lx*Ly*Lz, k = 2*pi*(n1/Lx, n2/Ly, n3/Lz), r = r_i - r_j.
Blocks: U_i = M_tt(i,j) F_j + M_tr(i,j) T_j,  W_i = M_rt(i,j) F_j + M_rr(i,j) T_j.
All functions return absolute mobilities (SI-like, eta explicit).
Only numpy + scipy are used.  Run:  python3 periodic_rpy_check.py
"""
import numpy as np
from scipy.special import erfc, spherical_jn
from scipy.integrate import quad

SQPI = np.sqrt(np.pi)
I3 = np.eye(3)

def cross_mat(v):
    """[v]_x such that [v]_x w = v x w."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])

def real_images(r, box, rc):
    """All r + n*box (n integer triple) with norm <= rc, excluding exact zero vectors."""
    nmax = [int(np.ceil(rc / L)) + 1 for L in box]
    g = np.mgrid[-nmax[0]:nmax[0]+1, -nmax[1]:nmax[1]+1, -nmax[2]:nmax[2]+1].reshape(3, -1).T
    R = r[None, :] + g * np.asarray(box)[None, :]
    d = np.linalg.norm(R, axis=1)
    keep = (d <= rc) & (d > 0)
    return R[keep], d[keep]

def recip_vectors(box, kc):
    """All k != 0 on the reciprocal lattice with |k| <= kc."""
    nmax = [int(np.ceil(kc * L / (2*np.pi))) + 1 for L in box]
    g = np.mgrid[-nmax[0]:nmax[0]+1, -nmax[1]:nmax[1]+1, -nmax[2]:nmax[2]+1].reshape(3, -1).T
    K = 2*np.pi * g / np.asarray(box)[None, :]
    k2 = np.sum(K*K, axis=1)
    keep = (k2 > 0) & (k2 <= kc*kc)
    return K[keep], k2[keep]

# ---------------------------------------------------------------- Beenakker / Hasimoto split
def hasimoto_phi(k2, xi):
    q = k2 / (4*xi*xi)
    return (1 + q + 2*q*q) * np.exp(-q)          # 1 + k^2/4xi^2 + k^4/8xi^4

def tt_real_coeffs(d, xi, a, eta):
    """Beenakker real-space RPY kernel (valid r >= 2a): returns (F, G), M = F I + G rr^."""
    mu0 = 1/(6*np.pi*eta*a)
    x = xi*d; E = np.exp(-x*x)/SQPI; C = erfc(x)
    F = C*(0.75*a/d + 0.5*a**3/d**3) + E*(4*xi**7*a**3*d**4 + 3*xi**3*a*d**2 - 20*xi**5*a**3*d**2
                                           - 4.5*xi*a + 14*xi**3*a**3 + xi*a**3/d**2)
    G = C*(0.75*a/d - 1.5*a**3/d**3) + E*(-4*xi**7*a**3*d**4 - 3*xi**3*a*d**2 + 16*xi**5*a**3*d**2
                                           + 1.5*xi*a - 2*xi**3*a**3 - 3*xi*a**3/d**2)
    return mu0*F, mu0*G

def rpy_free_tt(d, a, eta):
    """Free-space RPY translational kernel incl. overlap (Rotne-Prager / Wajnryb): (F, G)."""
    mu0 = 1/(6*np.pi*eta*a)
    d = np.asarray(d, float)
    far = d >= 2*a
    F = np.where(far, 0.75*a/d + 0.5*a**3/d**3, 1 - 9*d/(32*a))
    G = np.where(far, 0.75*a/d - 1.5*a**3/d**3, 3*d/(32*a))
    return mu0*F, mu0*G

def overlap_correction(d, a, eta):
    """Delta(F,G) to add to Beenakker real-space term when d < 2a (zero otherwise)."""
    F1, G1 = rpy_free_tt(d, a, eta)
    mu0 = 1/(6*np.pi*eta*a)
    F2 = mu0*(0.75*a/d + 0.5*a**3/d**3); G2 = mu0*(0.75*a/d - 1.5*a**3/d**3)
    ov = d < 2*a
    return np.where(ov, F1-F2, 0.0), np.where(ov, G1-G2, 0.0)

def tr_real_coeff(d, xi, eta):
    """M_tr^(r)(rho) = c(d) [rho]_x  (rho = image displacement)."""
    x = xi*d
    return -(erfc(x) + 2/SQPI*x*(1 - 6*x**2 + 2*x**4)*np.exp(-x*x)) / (8*np.pi*eta*d**3)

def rr_real_coeffs(d, xi, eta):
    """M_rr^(r)(rho) = P(d) I + Q(d) rr^."""
    x = xi*d; E = np.exp(-x*x)/SQPI
    P = -0.5*erfc(x) - E*(x + 14*x**3 - 20*x**5 + 4*x**7)
    Q = 1.5*erfc(x) + E*(3*x + 2*x**3 - 16*x**5 + 4*x**7)
    return P/(8*np.pi*eta*d**3), Q/(8*np.pi*eta*d**3)

def ewald_blocks(r, box, a, eta, xi, self_pair, overlap=True, tol_x=7.5):
    """Beenakker/Hasimoto Ewald sum: returns (Mtt, Mtr, Mrr) for displacement r = r_i - r_j.
    self_pair=True means i == j (r must be 0)."""
    r = np.asarray(r, float); box = np.asarray(box, float); V = np.prod(box)
    rc = tol_x/xi; kc = 2*xi*tol_x
    Mtt = np.zeros((3, 3)); Mtr = np.zeros((3, 3)); Mrr = np.zeros((3, 3))
    # real space
    R, d = real_images(r, box, rc)
    e = R / d[:, None]
    ee = e[:, :, None]*e[:, None, :]
    F, G = tt_real_coeffs(d, xi, a, eta)
    if overlap:
        dF, dG = overlap_correction(d, a, eta); F = F + dF; G = G + dG
    Mtt += np.sum(F)*I3 + np.einsum('n,nij->ij', G, ee)
    c = tr_real_coeff(d, xi, eta)
    Mtr += sum(ci*cross_mat(Ri) for ci, Ri in zip(c, R))
    P, Q = rr_real_coeffs(d, xi, eta)
    Mrr += np.sum(P)*I3 + np.einsum('n,nij->ij', Q, ee)
    # wave space
    K, k2 = recip_vectors(box, kc)
    kk = K[:, :, None]*K[:, None, :] / k2[:, None, None]
    proj = I3[None] - kk
    ph = hasimoto_phi(k2, xi)
    cs = np.cos(K @ r); sn = np.sin(K @ r)
    wtt = cs*(1 - a*a*k2/3)*ph/(eta*k2)/V
    Mtt += np.einsum('n,nij->ij', wtt, proj)
    wtr = -sn*ph/(2*eta*k2)/V
    Mtr += sum(w*cross_mat(k) for w, k in zip(wtr, K))
    wrr = cs*ph/(4*eta)/V
    Mrr += np.einsum('n,nij->ij', wrr, proj)
    # self terms
    if self_pair:
        Mtt += (1 - 6*xi*a/SQPI + 40*xi**3*a**3/(3*SQPI))/(6*np.pi*eta*a)*I3
        Mrr += (1 - 40*xi**3*a**3/(3*SQPI))/(8*np.pi*eta*a**3)*I3
    return Mtt, Mtr, Mrr

# ---------------------------------------------------------------- independent PSE-type split
def pse_wave_integrals(d, a, eta, xi):
    """W(d) = FT^-1[(I-kk) sinc^2(ka) H(k)/(eta k^2)] = f I + g rr^, H=(1+k^2/4xi^2)exp(-k^2/4xi^2).
    Computed by 1D quadrature (own derivation, no closed form used)."""
    def k2phi(k):   # k^2 * phi(k)
        s = np.sinc(k*a/np.pi)          # numpy sinc(x) = sin(pi x)/(pi x)
        q = k*k/(4*xi*xi)
        return s*s*(1+q)*np.exp(-q)/eta
    kmax = 2*xi*9.0
    opts = dict(limit=2000, epsabs=1e-17, epsrel=1e-13)
    if d == 0:
        f = quad(lambda k: k2phi(k)*(2/3), 0, kmax, **opts)[0]/(2*np.pi**2)
        return f, 0.0
    f = quad(lambda k: k2phi(k)*(spherical_jn(0, k*d) - spherical_jn(1, k*d)/(k*d) if k > 0 else k2phi(k)*2/3),
             0, kmax, **opts)[0]/(2*np.pi**2)
    g = quad(lambda k: k2phi(k)*spherical_jn(2, k*d), 0, kmax, **opts)[0]/(2*np.pi**2)
    return f, g

def pse_tt(r, box, a, eta, xi, self_pair, tol_x=8.0):
    """M_tt from the positively-split form (sinc^2 wave kernel, real part = RPY - W)."""
    r = np.asarray(r, float); box = np.asarray(box, float); V = np.prod(box)
    M = np.zeros((3, 3))
    R, d = real_images(r, box, tol_x/xi + 2*a)
    for Ri, di in zip(R, d):
        F0, G0 = rpy_free_tt(di, a, eta)
        f, g = pse_wave_integrals(di, a, eta, xi)
        e = Ri/di
        M += (F0 - f)*I3 + (G0 - g)*np.outer(e, e)
    K, k2 = recip_vectors(box, 2*xi*tol_x)
    k = np.sqrt(k2); s = np.sinc(k*a/np.pi)
    q = k2/(4*xi*xi)
    w = np.cos(K @ r)*s*s*(1+q)*np.exp(-q)/(eta*k2)/V
    M += np.einsum('n,nij->ij', w, I3[None] - K[:, :, None]*K[:, None, :]/k2[:, None, None])
    if self_pair:
        f0, _ = pse_wave_integrals(0.0, a, eta, xi)
        M += (1/(6*np.pi*eta*a) - f0)*I3
    return M

def brute_sinc2(r, box, a, eta, N):
    """Plain Fourier sum (1/(eta V)) sum_{k!=0,|n|<=N} sinc^2(ka)(I-kk)/k^2 cos(k.r), spherical cutoff |k| <= 2 pi N/L, no tail correction."""
    box = np.asarray(box, float); V = np.prod(box)
    L = box[0]; kc = 2*np.pi*N/L
    M = np.zeros((3, 3))
    g1 = np.arange(-N, N+1)
    for n1 in g1:                                   # chunk over first index
        g = np.mgrid[n1:n1+1, -N:N+1, -N:N+1].reshape(3, -1).T
        K = 2*np.pi*g/box[None, :]
        k2 = np.sum(K*K, axis=1)
        keep = (k2 > 0) & (k2 <= kc*kc)
        K = K[keep]; k2 = k2[keep]; k = np.sqrt(k2)
        s = np.sinc(k*a/np.pi)
        w = np.cos(K @ np.asarray(r, float))*s*s/(eta*k2)/V
        M += np.sum(w)*I3 - np.einsum('n,ni,nj->ij', w/k2, K, K)
    return M

# ---------------------------------------------------------------- main
if __name__ == "__main__":
    np.set_printoptions(precision=15, linewidth=150)
    a, eta, L = 1.0, 1.0, 10.0
    box = [L, L, L]
    mu0 = 1/(6*np.pi*eta*a); mur0 = 1/(8*np.pi*eta*a**3)
    print("=== Beenakker Ewald, cubic L=10, a=1, eta=1 ===")
    res = {}
    for xi in [0.2, np.sqrt(np.pi)/L, 0.35, 0.5, 1.0]:
        S = ewald_blocks([0, 0, 0], box, a, eta, xi, True)
        P = ewald_blocks([3, 0, 0], box, a, eta, xi, False)
        res[xi] = (S, P)
        print(f"xi={xi:.6f}  self tt/mu0 xx={S[0][0,0]/mu0:.15f}  pair tt/mu0 xx={P[0][0,0]/mu0:.15f} yy={P[0][1,1]/mu0:.15f}")
        print(f"            self rr/mur0 xx={S[2][0,0]*8*np.pi*eta*a**3:.15f}  pair rr xx={P[2][0,0]:.15e} yy={P[2][1,1]:.15e}")
        print(f"            pair tr [y,z]={P[1][1,2]:.15e} [z,y]={P[1][2,1]:.15e}  self tr max|.|={np.abs(S[1]).max():.1e}")
    xis = list(res)
    for blk, name in [(0, 'tt'), (1, 'tr'), (2, 'rr')]:
        dev = max(np.abs(res[x][0][blk]-res[xis[0]][0][blk]).max() + np.abs(res[x][1][blk]-res[xis[0]][1][blk]).max() for x in xis)
        print(f"max |difference| over xi values, block {name}: {dev:.2e}")
    # Hasimoto constant: periodic correction of the point-force (Oseen) self term, -6 pi eta L * [..]_xx
    for xiL in [0.5, 0.8]:
        xi = xiL/L
        R, d = real_images(np.zeros(3), np.array(box), 8.0/xi)
        x = xi*d; E = np.exp(-x*x)
        A = (erfc(x) + 2/SQPI*(2*x**3 - 3*x)*E)/d; B = (erfc(x) + 2/SQPI*(x - 2*x**3)*E)/d**3
        J = (np.sum(A)*I3 + np.einsum('n,ni,nj->ij', B, R, R))/(8*np.pi*eta)
        K, k2 = recip_vectors(np.array(box), 16.0*xi)
        w = hasimoto_phi(k2, xi)/(eta*k2)/L**3
        J += np.sum(w)*I3 - np.einsum('n,ni,nj->ij', w/k2, K, K) - xi/(np.pi**1.5*eta)*I3
        print(f"Hasimoto constant (xi*L={xiL}): {-6*np.pi*eta*L*J[0,0]:.14f}")
    S = res[0.5][0][0][0, 0]/mu0
    print(f"self tt/mu0 = {S:.15f};  1 - 2.837297479480620*(a/L) + (4pi/3)(a/L)^3 = {1 - 2.837297479480620*a/L + 4*np.pi/3*(a/L)**3:.15f}")
    Srr = res[0.5][0][2][0, 0]*8*np.pi*eta*a**3
    print(f"self rr/(1/8 pi eta a^3) = {Srr:.15f};  1 - (4pi/3)(a/L)^3 = {1 - 4*np.pi/3*(a/L)**3:.15f}")
    # independent check: PSE-type split (sinc^2 kernel, different splitting function)
    print("=== independent: positively-split form with sinc^2(ka) kernel ===")
    for xi in [0.5, 0.8]:
        Sp = pse_tt([0, 0, 0], box, a, eta, xi, True); Pp = pse_tt([3, 0, 0], box, a, eta, xi, False)
        print(f"xi={xi}: self xx/mu0={Sp[0,0]/mu0:.15f} pair xx/mu0={Pp[0,0]/mu0:.15f} yy/mu0={Pp[1,1]/mu0:.15f}"
              f"  |diff vs Beenakker| = {max(np.abs(Sp-res[0.5][0][0]).max(), np.abs(Pp-res[0.5][1][0]).max())/mu0:.2e} (mu0 units)")
    # overlap pair (r = 1.5a)
    Pb = ewald_blocks([1.5, 0, 0], box, a, eta, 0.5, False)[0]
    Pb2 = ewald_blocks([1.5, 0, 0], box, a, eta, 0.3, False)[0]
    Pp = pse_tt([1.5, 0, 0], box, a, eta, 0.6, False)
    print(f"overlap pair r=1.5a: Beenakker+dM xx/mu0={Pb[0,0]/mu0:.15f} yy/mu0={Pb[1,1]/mu0:.15f};"
          f" xi-dep {np.abs(Pb-Pb2).max()/mu0:.1e}; |diff vs PSE-type| {np.abs(Pb-Pp).max()/mu0:.2e}")
    # orthorhombic box
    ob = [10.0, 12.0, 15.0]
    A1 = ewald_blocks([0, 0, 0], ob, a, eta, 0.3, True); A2 = ewald_blocks([0, 0, 0], ob, a, eta, 0.7, True)
    B1 = ewald_blocks([3, 1, -2], ob, a, eta, 0.3, False); B2 = ewald_blocks([3, 1, -2], ob, a, eta, 0.7, False)
    print("orthorhombic 10x12x15: self tt diag/mu0 =", np.diag(A1[0])/mu0, " rr diag/mur0 =", np.diag(A1[2])/mur0)
    print("   max xi-dependence (tt,tr,rr; self & pair (3,1,-2)):",
          [f"{max(np.abs(A1[b]-A2[b]).max(), np.abs(B1[b]-B2[b]).max()):.1e}" for b in range(3)])
    # symmetry check M_rt(i,j) = M_tr(j,i)^T : M_tr(-r) = -M_tr(r), and M_tr antisymmetric structure
    print("   pair tr(3,1,-2) + tr(-3,-1,2) =", np.abs(B1[1] + ewald_blocks([-3, -1, 2], ob, a, eta, 0.3, False)[1]).max())
    # crude brute-force sinc^2 Fourier sum (slow 1/K convergence) for the pair, cubic box
    print("=== brute-force sinc^2 Fourier sum, pair (3,0,0), cubic (no splitting) ===")
    ref = res[0.5][1][0]
    for N in [20, 40, 80]:
        B = brute_sinc2([3, 0, 0], box, a, eta, N)
        print(f"N={N:3d}: xx/mu0={B[0,0]/mu0:.9f} yy/mu0={B[1,1]/mu0:.9f}  err xx={(B[0,0]-ref[0,0])/mu0:.2e} yy={(B[1,1]-ref[1,1])/mu0:.2e}")

# ---------------------------------------------------------------- overlap (r < 2a) forms for tr and rr
def generalized_rpy_rot_quad(d, a, eta):
    """Free-space generalized-RPY tr and rr kernels by quadrature of their Fourier forms:
    tr: i [k]_x sinc(ka) s1(ka) / (2 eta k^2),  rr: (I-kk) s1(ka)^2 / (4 eta),  s1(x) = 3 j1(x)/x.
    Returns c_tr (M_tr = c_tr [r^]_x), and (P, Q) with M_rr = P I + Q r^r^."""
    s1 = lambda x: 3*spherical_jn(1, x)/x if x > 0 else 1.0
    sc = lambda x: np.sinc(x/np.pi)
    opts = dict(limit=4000, epsabs=1e-15, epsrel=1e-12)
    kmax = 400.0/a   # integrands decay like k^-2 (tr) / k^-2 (rr, times oscillation); tail estimated below
    ctr = -quad(lambda k: sc(k*a)*s1(k*a)*k*spherical_jn(1, k*d), 0, kmax, **opts)[0]/(4*np.pi**2*eta)
    P = quad(lambda k: k*k*s1(k*a)**2*(spherical_jn(0, k*d) - (spherical_jn(1, k*d)/(k*d) if k > 0 else 1/3)), 0, kmax, **opts)[0]/(8*np.pi**2*eta)
    Q = quad(lambda k: k*k*s1(k*a)**2*spherical_jn(2, k*d), 0, kmax, **opts)[0]/(8*np.pi**2*eta)
    return ctr, P, Q

def wajnryb_rot(d, a, eta):
    """Closed forms (Wajnryb et al. 2013, equal spheres) incl. far field."""
    if d >= 2*a:
        return -1/(8*np.pi*eta*d**2), -1/(16*np.pi*eta*d**3), 3/(16*np.pi*eta*d**3)
    ctr = -(d/a - 3*d**2/(8*a**2))/(16*np.pi*eta*a**2)
    P = (1 - 27*d/(32*a) + 5*d**3/(64*a**3))/(8*np.pi*eta*a**3)
    Q = (9*d/(32*a) - 3*d**3/(64*a**3))/(8*np.pi*eta*a**3)
    return ctr, P, Q

if __name__ == "__main__":
    print("=== generalized RPY rotational kernels: quadrature vs closed form (free space) ===")
    for d in [0.5, 1.0, 1.5, 1.9, 2.5]:
        q = generalized_rpy_rot_quad(d, 1.0, 1.0); w = wajnryb_rot(d, 1.0, 1.0)
        print(f"d={d}: c_tr {q[0]:.10f} vs {w[0]:.10f} | P {q[1]:.10f} vs {w[1]:.10f} | Q {q[2]:.10f} vs {w[2]:.10f}")
    print("=== check values in normalised units (cubic L=10, a=1, eta=1, xi=0.5) ===")
    S, P, _ = ewald_blocks([0, 0, 0], [10.0]*3, 1.0, 1.0, 0.5, True), ewald_blocks([3, 0, 0], [10.0]*3, 1.0, 1.0, 0.5, False), None
    print("self tt/mu0:", S[0][0, 0]*6*np.pi, " self rr*(8 pi eta a^3):", S[2][0, 0]*8*np.pi)
    print("pair(3,0,0) tt/mu0 xx,yy:", P[0][0, 0]*6*np.pi, P[0][1, 1]*6*np.pi)
    print("pair(3,0,0) rr*(8 pi eta a^3) xx,yy:", P[2][0, 0]*8*np.pi, P[2][1, 1]*8*np.pi)
    print("pair(3,0,0) tr*(8 pi eta a^2) [y,z],[z,y]:", P[1][1, 2]*8*np.pi, P[1][2, 1]*8*np.pi)
