"""A variational autoencoder on flattened 28x28 images."""

from mindspore import nn, ops


class VAE(nn.Cell):
    def __init__(self, input_dim=784, hidden_dim=256, latent_dim=16):
        super().__init__()
        self.encoder = nn.SequentialCell(nn.Dense(input_dim, hidden_dim), nn.ReLU())
        self.fc_mu = nn.Dense(hidden_dim, latent_dim)
        self.fc_logvar = nn.Dense(hidden_dim, latent_dim)
        self.decoder = nn.SequentialCell(
            nn.Dense(latent_dim, hidden_dim),
            nn.ReLU(),
            nn.Dense(hidden_dim, input_dim),
            nn.Sigmoid(),
        )

    def encode(self, x):
        h = self.encoder(x)
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = ops.exp(0.5 * logvar)
        eps = ops.randn(std.shape)  # the only source of randomness
        return mu + eps * std

    def construct(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decoder(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction + KL divergence, summed over the batch."""
    bce = ops.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * ops.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def make_model():
    return VAE()


def make_inputs():
    return (ops.rand(8, 1, 28, 28),)


if __name__ == "__main__":
    model = make_model()
    x = make_inputs()[0]
    recon, mu, logvar = model(x)
    print("loss", float(loss_function(recon, x, mu, logvar)))
